package primary

import (
	"context"
	"crypto/tls"
	"fmt"

	"github.com/turncli/turncli/internal/statedir"
	"github.com/turncli/turncli/primary/ha"
	"github.com/turncli/turncli/primary/listen"
)

// EndpointsFile is the name of the file, in the state dir, that says where a running primary
// serves.
const EndpointsFile = statedir.EndpointsFile

// ServerTLS is the TLS configuration of the public listeners (see listen.ServerTLS).
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	return listen.ServerTLS(certFile, keyFile)
}

// Run locks the state directory, listens on the configured addresses, writes endpoints.json
// once serving, and serves until ctx ends. With cfg.HA.Enabled it first stands by on those
// addresses until it holds the leader lease (see package ha). When another primary holds the
// state directory it fails at once with a *statedir.HeldError naming it.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil { // New validates again: Validate is idempotent
		return err
	}
	// The lock comes before anything is written in the directory or any port is taken, so a
	// second primary on it changes nothing of the first's and says why it stops.
	if err := prepareStateDir(cfg.StateDir); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	lock, err := statedir.Acquire(cfg.StateDir)
	if err != nil {
		return err
	}
	defer lock.Release()
	raw, err := cfg.Listen.Open()
	if err != nil {
		return err
	}
	if cfg.HA.Enabled {
		defer raw.Close() // the servers of each term only borrow the sockets
		return ha.Run(ctx, cfg.HA, cfg.Store.URL, raw, cfg.Logger, func(ctx context.Context, lis Listeners, fence int64) error {
			cfg.fence = fence
			return serveTerm(ctx, cfg, lis)
		})
	}
	if err := serveTerm(ctx, cfg, raw); err != nil {
		raw.Close()
		return err
	}
	return nil
}

// serveTerm builds the primary on lis (the recovery of a restart: see New and Serve), writes
// endpoints.json and serves until ctx ends. The servers close lis when they stop.
func serveTerm(ctx context.Context, cfg Config, lis Listeners) error {
	p, err := New(ctx, cfg, lis)
	if err != nil {
		return err
	}
	ep := p.Endpoints()
	if err := statedir.WriteEndpoints(p.cfg.StateDir, ep); err != nil {
		return fmt.Errorf("endpoints: %w", err)
	}
	defer statedir.RemoveEndpoints(p.cfg.StateDir, ep.PID)
	return p.Serve(ctx)
}
