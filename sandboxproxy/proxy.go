// Package sandboxproxy forwards Agent CLI calls from inside a sandbox to the primary. It serves
// only the contract's two REST routes, on loopback, and forwards each call over the worker's
// gRPC connection, which carries the worker's credential and identity. It keeps no state and
// makes no authorization decision: before reading a body it asks the primary whether the grant
// may be used through this worker, and the primary authorises the forwarded call again.
//
// It runs inside mindroom-worker by default; Serve with a connection of its own makes it a
// sidecar. Either way it is the worker's: what it answers 500 without the primary having
// logged it is logged on the logger it is given, and the answer names the worker's log.
package sandboxproxy

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/agentclihttp"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/logging"
	"github.com/turncli/turncli/internal/workermeta"
)

// Identity is the worker whose credential and id the proxy's calls carry. Dial the primary
// with PerRPCCredentials(identity) so every forwarded call is attributed to the worker.
type Identity struct {
	Credential string
	WorkerID   string
	// Insecure allows sending the credential without TLS (loopback or a trusted network).
	Insecure bool
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (i Identity) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{workermeta.CredentialKey: i.Credential, workermeta.IDKey: i.WorkerID}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (i Identity) RequireTransportSecurity() bool { return !i.Insecure }

// NewHandler returns the proxy's HTTP handler over conn; log (nil discards) records the faults
// it answers 500.
func NewHandler(ctx context.Context, conn grpc.ClientConnInterface, log *slog.Logger) (http.Handler, error) {
	workers := workerv1.NewWorkerServiceClient(conn)
	return agentclihttp.NewHandler(ctx, conn, func(ctx context.Context, token string) bool {
		_, err := workers.CheckGrant(ctx, &workerv1.CheckGrantRequest{Grant: token})
		return err == nil
	}, agentclihttp.Faults{Log: log, Owner: fault.WorkerLog})
}

// IdleTimeout closes a shell's connection idle this long between requests.
const IdleTimeout = 2 * time.Minute

// Serve serves the proxy on lis until ctx ends, then shuts it down gracefully. log (nil
// discards) records the faults it answers 500 and its HTTP server's errors. wrap, when given,
// wraps the handler (the worker's request metrics).
func Serve(ctx context.Context, lis net.Listener, conn grpc.ClientConnInterface, log *slog.Logger, wrap ...func(http.Handler) http.Handler) error {
	h, err := NewHandler(ctx, conn, log)
	if err != nil {
		return err
	}
	for _, wr := range wrap {
		h = wr(h)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: IdleTimeout, ErrorLog: logging.HTTPServerLog(log)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
