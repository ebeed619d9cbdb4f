package primary

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/turncli/turncli/primary/credentials"
	"github.com/turncli/turncli/primary/lifecycle"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/surfaces"
	"github.com/turncli/turncli/primary/surfaces/links"
	"github.com/turncli/turncli/primary/surfaces/matrix"
	"github.com/turncli/turncli/primary/surfaces/slack"
	"github.com/turncli/turncli/primary/threadfeed"
)

// chats are the chat surfaces' loops (each configured surface's delivery of the thread feed
// and its reading of answers), which Serve starts and the intake phase stops: like the other
// readers of endless streams, they end before anything waits for requests, and long before
// the store closes.
type chats struct {
	loops []func(context.Context) error
	// slack serves Slack's interactivity requests on the REST listener; nil without Slack.
	slack http.Handler
	// links mints decision links; linkPages serves them on the REST listener (package links).
	links     *links.Minter
	linkPages http.Handler
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	log       *slog.Logger
}

// buildChats builds the surfaces cfg configures and registers their stop.
func buildChats(cfg Config, db store.Store, feed *threadfeed.Feed, observer surfaces.Observer, live *secrets.Registry,
	stops *lifecycle.Stops, log *slog.Logger) (*chats, error) {
	c := &chats{log: log}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	stops.Add(lifecycle.Intake, "chat surfaces", func(context.Context) error { c.stop(); return nil })
	// The links key is made even while links are off, so that turning them on later needs no
	// other step; the handler then answers only links this key signed.
	secret, err := credentials.LinksKey(cfg.StateDir, live)
	if err != nil {
		return nil, fmt.Errorf("decision links: %w", err)
	}
	key, err := links.NewKey(secret)
	if err != nil {
		return nil, err
	}
	c.links = links.NewMinter(feed, key, cfg.Links, cfg.Clock)
	c.linkPages = links.NewHandler(feed, key, cfg.Clock, log.With("surface", "links"))
	if cfg.Matrix.On() {
		loops, err := matrixLoops(cfg.Matrix, db, feed, observer, live, log.With("surface", matrix.SurfaceName))
		if err != nil {
			return nil, fmt.Errorf("matrix surface: %w", err)
		}
		c.loops = append(c.loops, loops...)
	}
	if cfg.Slack.On() {
		handler, loops, err := slackLoops(cfg.Slack, db, feed, observer, live, log.With("surface", slack.SurfaceName))
		if err != nil {
			return nil, fmt.Errorf("slack surface: %w", err)
		}
		c.slack, c.loops = handler, append(c.loops, loops...)
	}
	return c, nil
}

// slackLoops are the Slack surface's delivery and the decisions of the answers its
// interactivity endpoint, returned first, receives.
func slackLoops(s slack.Settings, db store.Store, feed *threadfeed.Feed, observer surfaces.Observer, live *secrets.Registry,
	log *slog.Logger) (http.Handler, []func(context.Context) error, error) {
	live.Add(s.BotToken)
	live.Add(s.SigningSecret)
	view, err := s.View()
	if err != nil {
		return nil, nil, err
	}
	client := s.Client()
	surface := slack.NewFeedSurface(client, feed, view, log)
	delivery, err := surfaces.NewDelivery(surfaces.DeliveryConfig{Feed: feed, Store: db, Surface: surface, Observer: observer, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	handler, err := slack.NewHandler(client, slack.HandlerConfig{SigningSecret: s.SigningSecret, Decide: surface.Decide,
		OpenForm: surface.OpenForm, QueueSize: s.Queue, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	return handler, []func(context.Context) error{delivery.Run, handler.Run}, nil
}

// matrixLoops are the Matrix surface's delivery and its listener for answers.
func matrixLoops(s matrix.Settings, db store.Store, feed *threadfeed.Feed, observer surfaces.Observer, live *secrets.Registry,
	log *slog.Logger) ([]func(context.Context) error, error) {
	live.Add(s.AccessToken)
	cli, err := s.Client()
	if err != nil {
		return nil, err
	}
	view, err := s.View()
	if err != nil {
		return nil, err
	}
	surface := matrix.NewFeedSurface(matrix.New(cli), feed, view, log)
	delivery, err := surfaces.NewDelivery(surfaces.DeliveryConfig{Feed: feed, Store: db, Surface: surface, Observer: observer, Logger: log})
	if err != nil {
		return nil, err
	}
	listener, err := matrix.NewListener(cli, syncToken{db: db, surface: matrix.SurfaceName}, surface)
	if err != nil {
		return nil, err
	}
	listen := func(ctx context.Context) error {
		return surfaces.DefaultRetry.Loop(ctx, func(ctx context.Context) (bool, error) {
			return true, listener.Run(ctx)
		}, nil, func(err error, wait time.Duration) {
			log.Warn("reading Matrix answers failed; retrying", "err", err, "retry_in", wait)
		})
	}
	return []func(context.Context) error{delivery.Run, listen}, nil
}

// start runs every loop until the surfaces stop; a loop that fails is logged and not
// restarted (each retries what it can cure by itself).
func (c *chats) start() {
	for _, loop := range c.loops {
		c.wg.Go(func() {
			if err := loop(c.ctx); err != nil {
				c.log.Error("a chat surface stopped", "err", err)
			}
		})
	}
}

// stop ends the loops and waits for them.
func (c *chats) stop() {
	c.cancel()
	c.wg.Wait()
}

// syncToken keeps a surface's /sync position in the store (store.SurfaceCards), beside its
// feed position.
type syncToken struct {
	db      store.SurfaceCards
	surface string
}

// positionSync is the name of a surface's position in its own event stream.
const positionSync = "sync"

func (t syncToken) LoadSyncToken(ctx context.Context) (string, error) {
	p, err := t.db.SurfacePosition(ctx, t.surface, positionSync)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return p.Value, err
}

func (t syncToken) SaveSyncToken(ctx context.Context, token string) error {
	return t.db.SaveSurfaceDelivery(ctx, store.SurfaceDelivery{Positions: []store.SurfacePosition{{Surface: t.surface, Name: positionSync, Value: token}}})
}
