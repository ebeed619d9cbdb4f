package telemetry

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc/stats"
)

// The instrumentation records spans only: the processes' measurements are their Prometheus
// registries, so the OpenTelemetry meters stay no-ops and cost nothing.

// GRPCServerHandler is the stats handler of a gRPC server: each RPC gets a server span that
// continues the caller's traceparent metadata. Health checks get none.
func (t *Telemetry) GRPCServerHandler() stats.Handler {
	return otelgrpc.NewServerHandler(t.grpcOptions()...)
}

// GRPCClientHandler is the stats handler of a gRPC client connection: each RPC gets a client
// span and sends its context as traceparent metadata.
func (t *Telemetry) GRPCClientHandler() stats.Handler {
	return otelgrpc.NewClientHandler(t.grpcOptions()...)
}

func (t *Telemetry) grpcOptions() []otelgrpc.Option {
	return []otelgrpc.Option{
		otelgrpc.WithTracerProvider(t.provider), otelgrpc.WithPropagators(Propagator),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelgrpc.WithFilter(filters.Not(filters.HealthCheck())),
	}
}

// HTTPHandler wraps an HTTP server's handler: each request gets a server span that continues
// the request's traceparent header, named by its method and the pattern route gives (never a
// path holding an id; "" names the span by its method alone).
func (t *Telemetry) HTTPHandler(h http.Handler, route func(*http.Request) string) http.Handler {
	return otelhttp.NewHandler(h, "http",
		otelhttp.WithTracerProvider(t.provider), otelhttp.WithPropagators(Propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if p := route(r); p != "" {
				return r.Method + " " + p
			}
			return r.Method
		}))
}
