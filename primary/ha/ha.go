// Package ha serves a primary as one of several sharing a PostgreSQL store, active and
// standby: it stands by on the primary's listeners (every API answering Unavailable, naming the
// leader) until it takes the leader lease, then hands the same sockets to a primary built for
// the term, and ends the term when the lease is lost.
//
// It does not build the primary: the composition root (package primary) passes a Term that
// does. It owns the lease's timing and the standby's answers, nothing of a serving primary.
package ha

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/turncli/turncli/primary/leader"
	"github.com/turncli/turncli/primary/listen"
)

// releaseTimeout bounds giving the lease up on a clean stop; past it the lease just expires.
const releaseTimeout = 2 * time.Second

// Term builds a primary on lis, as after a restart, whose store's every write carries the
// fencing token fence, and serves it until ctx ends. The servers close lis when they stop.
type Term func(ctx context.Context, lis listen.Listeners, fence int64) error

// Run serves raw as one of several primaries on the PostgreSQL store at storeURL: a standby
// until this primary takes the leader lease, then term (the old leader's grants are dead, its
// jobs re-found). Losing the lease ends the term at once and Run fails, so the supervisor
// starts the process again, as a standby: a primary leads at most once per process, which
// keeps the rule simple and its state fresh. raw stays open: the caller closes it.
func Run(ctx context.Context, cfg Config, storeURL string, raw listen.Listeners, log *slog.Logger, term Term) error {
	backend, err := leader.OpenPostgres(ctx, storeURL)
	if err != nil {
		return fmt.Errorf("leader lease: %w", err)
	}
	defer backend.Close()
	addr := cfg.AdvertiseAddr
	if addr == "" {
		addr = raw.GRPC.Addr().String()
	}
	host, _ := os.Hostname()
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	elector, err := leader.New(leader.Config{
		Backend: backend, Holder: fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(nonce)), Addr: addr,
		TTL: cfg.LeaseTTL, Renew: cfg.LeaseRenew, Logger: log.With("component", "leader"),
	})
	if err != nil {
		return err
	}

	lis, err := lendAll(raw)
	if err != nil {
		return err
	}
	sb := newStandby(log)
	sb.serve(lis.Secured())
	log.Info("primary standing by", "grpc", raw.GRPC.Addr().String(), "advertise", addr)
	waited := time.Now()
	lease, err := elector.Campaign(ctx, sb.follow)
	sb.stop()
	if err != nil {
		return nil // ctx ended while standing by
	}
	log.Info("primary taking over", "fence", lease.Fence, "stood_by", time.Since(waited).Round(time.Millisecond))

	if lis, err = lendAll(raw); err != nil {
		return err
	}
	termCtx, endTerm := context.WithCancelCause(ctx)
	defer endTerm(nil)
	held := make(chan error, 1)
	go func() {
		err := elector.Hold(termCtx)
		if err != nil {
			log.Error("leader lease lost: stopping at once", "err", err)
			endTerm(err)
		}
		held <- err
	}()
	served := term(termCtx, lis, lease.Fence)
	endTerm(nil)
	if lost := <-held; lost != nil {
		return errors.Join(lost, served)
	}
	if served == nil {
		// Every writer has stopped: a standby may take over without waiting for the TTL.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if err := elector.Release(rctx); err != nil {
			log.Warn("leader lease not released; it expires by itself", "err", err)
		}
	}
	return served
}

// lendAll lends every listener of raw (see handoffListener); Metrics stays nil when it is.
func lendAll(raw listen.Listeners) (listen.Listeners, error) {
	out := listen.Listeners{TLS: raw.TLS}
	for _, spec := range []struct {
		src net.Listener
		dst *net.Listener
	}{{raw.GRPC, &out.GRPC}, {raw.HTTP, &out.HTTP}, {raw.AgentCLI, &out.AgentCLI}, {raw.Metrics, &out.Metrics}} {
		if spec.src == nil {
			continue
		}
		tcp, ok := spec.src.(*net.TCPListener)
		if !ok {
			return listen.Listeners{}, errNotTCP
		}
		l, err := lend(tcp)
		if err != nil {
			return listen.Listeners{}, err
		}
		*spec.dst = l
	}
	return out, nil
}
