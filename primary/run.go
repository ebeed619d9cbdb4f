package primary

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/turncli/turncli/internal/statedir"
)

// EndpointsFile is the name of the file, in the state dir, that says where a running primary
// serves.
const EndpointsFile = statedir.EndpointsFile

// ServerTLS is the TLS configuration of the public listeners: TLS 1.2 or later. TLS ends at the
// listener, so the servers behind it, and the in-process connections that bypass it, are the
// same as without TLS.
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Run locks the state directory, listens on the configured addresses, writes endpoints.json
// once serving, and serves until ctx ends. With cfg.ActiveStandby it first stands by on those
// addresses until it holds the leader lease (see runActiveStandby). When another primary holds
// the state directory it fails at once with a *statedir.HeldError naming it.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.AgentCLIListen == "" {
		return errors.New("the Agent CLI listener address is required (a loopback address)")
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
	var raw Listeners
	var opened []net.Listener
	closeAll := func() {
		for _, l := range opened {
			l.Close()
		}
	}
	for _, spec := range []struct {
		addr string
		dst  *net.Listener
	}{{cfg.GRPCListen, &raw.GRPC}, {cfg.HTTPListen, &raw.HTTP}, {cfg.AgentCLIListen, &raw.AgentCLI}, {cfg.MetricsListen, &raw.Metrics}} {
		if spec.addr == "" && spec.dst == &raw.Metrics {
			continue // metrics are optional
		}
		l, err := net.Listen("tcp", spec.addr)
		if err != nil {
			closeAll()
			return fmt.Errorf("listen %s: %w", spec.addr, err)
		}
		opened = append(opened, l)
		*spec.dst = l
	}
	if cfg.TLSCertFile != "" {
		var err error
		if raw.TLS, err = ServerTLS(cfg.TLSCertFile, cfg.TLSKeyFile); err != nil {
			closeAll()
			return err
		}
	}
	if cfg.ActiveStandby {
		defer closeAll() // the servers of each phase only borrow the sockets
		return runActiveStandby(ctx, cfg, raw)
	}
	if err := serveTerm(ctx, cfg, raw); err != nil {
		closeAll()
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
