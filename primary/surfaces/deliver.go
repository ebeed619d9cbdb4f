package surfaces

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/turncli/turncli/internal/backoff"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/threadfeed"
)

// PositionFeed is the name of a surface's position in the thread feed.
const PositionFeed = "feed"

// DefaultRetry paces a surface's attempts while its chat system fails: soon after a blip,
// and no more than once a minute during an outage.
var DefaultRetry = backoff.Policy{Min: time.Second, Max: time.Minute}

// Feed is the thread feed as a delivery reads it.
type Feed interface {
	Follow(ctx context.Context, from threadfeed.Cursor, v threadfeed.View, send func(threadfeed.Message) error) error
}

// Delivery shows the feed on one surface. Run it once per surface, on the primary that
// serves (an active-standby primary's standby runs none).
type Delivery struct {
	feed     Feed
	store    store.SurfaceCards
	surface  Surface
	observer Observer
	logger   *slog.Logger
	retry    backoff.Policy

	// passed counts the messages passed over since the position was last saved: their
	// position is saved with the next delivery, or after passSaveEvery of them, instead of
	// one write each.
	passed int
}

// passSaveEvery is how many messages passed over in a row make the position be saved.
const passSaveEvery = 100

// DeliveryConfig is what a Delivery needs.
type DeliveryConfig struct {
	Feed     Feed
	Store    store.SurfaceCards
	Surface  Surface
	Observer Observer // nil: none
	Logger   *slog.Logger
	// Retry paces the attempts after a failed delivery (zero: DefaultRetry).
	Retry backoff.Policy
}

// NewDelivery returns the delivery of cfg.
func NewDelivery(cfg DeliveryConfig) (*Delivery, error) {
	if cfg.Feed == nil || cfg.Store == nil || cfg.Surface == nil {
		return nil, errors.New("surfaces: a delivery needs the feed, the store and its surface")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Observer == nil {
		cfg.Observer = noObserver{}
	}
	if cfg.Retry == (backoff.Policy{}) {
		cfg.Retry = DefaultRetry
	}
	return &Delivery{feed: cfg.Feed, store: cfg.Store, surface: cfg.Surface, observer: cfg.Observer,
		logger: cfg.Logger.With("surface", cfg.Surface.Name()), retry: cfg.Retry}, nil
}

// Run delivers the feed from the surface's saved position, then each new event as it
// commits, until ctx ends or the feed stops (threadfeed.ErrStopping); it returns nil then. A
// failed delivery is tried again from the saved position, after a pause that grows with
// each failure in a row.
func (d *Delivery) Run(ctx context.Context) error {
	stopping := func(err error) bool { return errors.Is(err, threadfeed.ErrStopping) }
	err := d.retry.Loop(ctx, func(ctx context.Context) (bool, error) {
		from, err := d.position(ctx)
		if err != nil {
			return false, err
		}
		delivered := false
		err = d.feed.Follow(ctx, from, d.surface.View(), func(m threadfeed.Message) error {
			delivered = true
			return d.deliver(ctx, m)
		})
		return delivered, err
	}, stopping, func(err error, wait time.Duration) {
		d.logger.Warn("surface delivery failed; retrying from its saved position", "err", err, "retry_in", wait)
	})
	if stopping(err) {
		return nil
	}
	return err
}

// position is where the surface resumes: its saved feed position, the start when none.
func (d *Delivery) position(ctx context.Context) (threadfeed.Cursor, error) {
	d.passed = 0
	p, err := d.store.SurfacePosition(ctx, d.surface.Name(), PositionFeed)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", nil
	case err != nil:
		return "", err
	}
	return threadfeed.Cursor(p.Value), nil
}

// deliver shows one message of the feed, then saves the position past it with the card.
func (d *Delivery) deliver(ctx context.Context, m threadfeed.Message) error {
	switch {
	case m.Item != nil:
		return d.showItem(ctx, *m.Item, m.Cursor)
	case m.Chunk != nil:
		return d.showChunk(ctx, *m.Chunk, m.Cursor)
	}
	return nil
}

// showItem shows an item's change: a card for an item the surface has not shown (unless it
// closed before the surface saw it open: nobody can act on it, and its thread moved on), an
// edit of its card otherwise. An event the card already shows is passed over.
func (d *Delivery) showItem(ctx context.Context, it threadfeed.Item, next threadfeed.Cursor) error {
	if !d.surface.Serves(it.Channel, it.Thread) {
		return d.pass(ctx, next)
	}
	card, err := d.store.SurfaceCard(ctx, d.surface.Name(), it.Key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		card = store.SurfaceCard{}
		if it.State == threadfeed.StateClosed {
			return d.pass(ctx, next)
		}
	case err != nil:
		return err
	case card.Shown >= it.EventID:
		return d.pass(ctx, next)
	}
	msg, err := d.surface.Show(ctx, it, card)
	d.observer.Delivered(d.surface.Name(), "card", err)
	if err != nil {
		return fmt.Errorf("show %s: %w", it.Key, err)
	}
	if card.MessageID == "" {
		card = store.SurfaceCard{Surface: d.surface.Name(), ItemKey: it.Key, Room: it.Channel, Thread: it.Thread}
	}
	card.MessageID, card.Shown = msg, it.EventID
	return d.save(ctx, &card, next)
}

// showChunk posts a chunk of a report under the item's card; a report whose item has no card
// here is passed over.
func (d *Delivery) showChunk(ctx context.Context, c threadfeed.Chunk, next threadfeed.Cursor) error {
	card, err := d.store.SurfaceCard(ctx, d.surface.Name(), c.Key)
	if errors.Is(err, store.ErrNotFound) {
		return d.pass(ctx, next)
	} else if err != nil {
		return err
	}
	err = d.surface.Report(ctx, card, c)
	d.observer.Delivered(d.surface.Name(), "report", err)
	if err != nil {
		return fmt.Errorf("report %s chunk %d of %d: %w", c.Key, c.Index+1, c.Count, err)
	}
	return d.save(ctx, nil, next)
}

// save records the card (when given) and the position past the message in one transaction.
func (d *Delivery) save(ctx context.Context, card *store.SurfaceCard, next threadfeed.Cursor) error {
	delivery := store.SurfaceDelivery{Positions: []store.SurfacePosition{{Surface: d.surface.Name(), Name: PositionFeed, Value: string(next)}}}
	if card != nil {
		delivery.Cards = []store.SurfaceCard{*card}
	}
	if err := d.store.SaveSurfaceDelivery(ctx, delivery); err != nil {
		return err
	}
	d.passed = 0
	return nil
}

// pass passes over a message the surface shows nothing of.
func (d *Delivery) pass(ctx context.Context, next threadfeed.Cursor) error {
	if d.passed++; d.passed < passSaveEvery {
		return nil
	}
	return d.save(ctx, nil, next)
}

type noObserver struct{}

func (noObserver) Delivered(string, string, error) {}
