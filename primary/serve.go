package primary

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/turncli/turncli/internal/buildinfo"
	"github.com/turncli/turncli/primary/lifecycle"
)

// Serve recovers what a previous primary left (see recoverJobs), serves every listener and
// runs the background loops until ctx ends or a server fails, then stops what New built, in
// the order New registered (see package lifecycle): readiness off, endless streams ended, jobs
// unsupervised, responses closed, long-lived connections ended, servers stopped gracefully
// with a hard stop as backstop, the store closed.
func (p *Primary) Serve(ctx context.Context) error {
	if err := p.recoverJobs(ctx); err != nil {
		p.shutdown()
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	serveGRPC := func(s *grpc.Server, l net.Listener) func() error {
		return func() error {
			if err := s.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				return err
			}
			return nil
		}
	}
	serveHTTP := func(s *http.Server, l net.Listener) func() error {
		return func() error {
			if err := s.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}
	}
	g.Go(serveGRPC(p.grpcServer, p.lis.GRPC))
	g.Go(serveGRPC(p.grpcServer, p.internalGRPC))
	g.Go(serveHTTP(p.cliHTTP, p.lis.AgentCLI))
	g.Go(serveHTTP(p.apiHTTP, p.lis.HTTP))
	if p.metricsHTTP != nil {
		g.Go(serveHTTP(p.metricsHTTP, p.lis.Metrics))
	}
	g.Go(func() error {
		p.internals.Responses.RunReaper(gctx)
		return nil
	})
	g.Go(func() error {
		p.internals.Responses.RunCallApprovalExpiry(gctx)
		return nil
	})
	g.Go(func() error {
		p.ready.Run(gctx, readinessRefresh)
		return nil
	})
	g.Go(func() error {
		p.internals.Interaction.Background.RunParking(gctx)
		return nil
	})
	g.Go(func() error {
		p.operatorAuth.Watch(gctx, p.cfg.Clock, operatorsRecheck)
		return nil
	})
	p.chats.start()
	g.Go(func() error {
		<-gctx.Done()
		p.shutdown()
		return nil
	})
	p.serving.Set()
	p.ready.Refresh(ctx)
	ep := p.Endpoints()
	attrs := append([]any{"grpc", p.lis.GRPC.Addr().String(), "http", p.lis.HTTP.Addr().String(),
		"agent_cli", p.lis.AgentCLI.Addr().String(), "dashboard", ep.HTTP + "/ui/"}, buildinfo.Read().LogAttrs()...)
	if ep.OperatorTokenFile != "" {
		attrs = append(attrs, "admin_credential_file", ep.OperatorTokenFile)
	}
	if p.lis.Metrics != nil {
		attrs = append(attrs, "metrics", p.lis.Metrics.Addr().String())
	}
	p.cfg.Logger.Info("primary serving", attrs...)
	if p.cfg.OnServing != nil {
		p.cfg.OnServing(ep)
	}
	return g.Wait()
}

// shutdown stops what New built, in the order it registered.
func (p *Primary) shutdown() {
	if err := p.stops.Stop(context.Background()); err != nil {
		p.cfg.Logger.Error("shutdown step failed", "err", err)
	}
	p.cfg.Logger.Info("primary stopped")
}

// readinessRefresh is how often the readiness checks run by themselves, so the gRPC health
// status follows them when nobody asks /readyz.
const readinessRefresh = 5 * time.Second

// operatorsRecheck is how often the operators are looked at for a removal nobody's call has
// noticed (`mindroom-primary operators remove` in another process), so that the removed
// operator's dashboard sessions end within it. A look loads the store's stamp from shared
// memory (PostgreSQL: reads the few operator rows).
const operatorsRecheck = time.Second

// gracefulStop stops s gracefully, and hard once grace has passed: the calls still open then
// are cut.
func gracefulStop(s *grpc.Server, grace time.Duration) lifecycle.Stop {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, grace)
		defer cancel()
		done := make(chan struct{})
		go func() { s.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.Stop()
			<-done
		}
		return nil
	}
}

// shutdownHTTP stops s taking connections, waits up to grace for its requests to finish, then
// closes the connections left.
func shutdownHTTP(s *http.Server, grace time.Duration) lifecycle.Stop {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, grace)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = s.Close() // the connections left, once grace has passed
		return nil
	}
}
