package primary

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/turncli/turncli/primary/leader"
)

// releaseTimeout bounds giving the lease up on a clean stop; past it the lease just expires.
const releaseTimeout = 2 * time.Second

// runActiveStandby serves raw as one of several primaries on one PostgreSQL store: a standby
// (see standby) until this primary takes the leader lease, then a primary built as after a
// restart (New: the old leader's grants are dead, its jobs re-found) whose every write carries
// the lease's fencing token. Losing the lease ends the term at once and Run fails, so the
// supervisor starts the process again, as a standby: a primary leads at most once per process,
// which keeps the rule simple and its state fresh.
func runActiveStandby(ctx context.Context, cfg Config, raw Listeners) error {
	backend, err := leader.OpenPostgres(ctx, cfg.StoreURL)
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
		TTL: cfg.LeaseTTL, Renew: cfg.LeaseRenew, Logger: cfg.Logger.With("component", "leader"),
	})
	if err != nil {
		return err
	}

	lis, err := lendAll(raw)
	if err != nil {
		return err
	}
	sb := newStandby(cfg.Logger)
	sb.serve(lis.secured())
	cfg.Logger.Info("primary standing by", "grpc", raw.GRPC.Addr().String(), "advertise", addr)
	waited := time.Now()
	lease, err := elector.Campaign(ctx, sb.follow)
	sb.stop()
	if err != nil {
		return nil // ctx ended while standing by
	}
	cfg.Logger.Info("primary taking over", "fence", lease.Fence, "stood_by", time.Since(waited).Round(time.Millisecond))

	if lis, err = lendAll(raw); err != nil {
		return err
	}
	cfg.fence = lease.Fence
	term, endTerm := context.WithCancelCause(ctx)
	defer endTerm(nil)
	held := make(chan error, 1)
	go func() {
		err := elector.Hold(term)
		if err != nil {
			cfg.Logger.Error("leader lease lost: stopping at once", "err", err)
			endTerm(err)
		}
		held <- err
	}()
	served := serveTerm(term, cfg, lis)
	endTerm(nil)
	if lost := <-held; lost != nil {
		return errors.Join(lost, served)
	}
	if served == nil {
		// Every writer has stopped: a standby may take over without waiting for the TTL.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if err := elector.Release(rctx); err != nil {
			cfg.Logger.Warn("leader lease not released; it expires by itself", "err", err)
		}
	}
	return served
}

// lendAll lends every listener of raw (see handoffListener); Metrics stays nil when it is.
func lendAll(raw Listeners) (Listeners, error) {
	out := Listeners{TLS: raw.TLS}
	for _, spec := range []struct {
		src net.Listener
		dst *net.Listener
	}{{raw.GRPC, &out.GRPC}, {raw.HTTP, &out.HTTP}, {raw.AgentCLI, &out.AgentCLI}, {raw.Metrics, &out.Metrics}} {
		if spec.src == nil {
			continue
		}
		tcp, ok := spec.src.(*net.TCPListener)
		if !ok {
			return Listeners{}, errNotTCP
		}
		l, err := lend(tcp)
		if err != nil {
			return Listeners{}, err
		}
		*spec.dst = l
	}
	return out, nil
}
