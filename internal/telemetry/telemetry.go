package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Telemetry is a process's tracing: its TracerProvider, and the exporter to flush and stop at
// shutdown when tracing is on.
type Telemetry struct {
	provider trace.TracerProvider
	sdk      *sdktrace.TracerProvider // nil when tracing is off
}

// Disabled is tracing off: spans are non-recording and keep the context they start in.
func Disabled() *Telemetry {
	return &Telemetry{provider: noop.NewTracerProvider()}
}

// FromEnv builds the tracing of the service named service (OTEL_SERVICE_NAME overrides it) from
// the process environment; see New.
func FromEnv(ctx context.Context, service string) (*Telemetry, error) {
	return New(ctx, service, os.Getenv)
}

// New builds the tracing of the service named service from the OTEL_* variables getenv reads.
// Tracing is on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set,
// or OTEL_TRACES_EXPORTER is "otlp"; it is off when OTEL_SDK_DISABLED is "true" or
// OTEL_TRACES_EXPORTER is "none", and otherwise. Spans go over OTLP/gRPC in batches. The
// exporter's other settings (headers, certificates, timeout, compression), the sampler and
// the batch limits are the SDK's own OTEL_* variables, read from the process environment.
func New(ctx context.Context, service string, getenv func(string) string) (*Telemetry, error) {
	on, endpoint, err := configured(getenv)
	if err != nil || !on {
		return Disabled(), err
	}
	var opts []otlptracegrpc.Option
	switch {
	case strings.Contains(endpoint, "://"):
		opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint)) // http:// is insecure
	case endpoint != "":
		opts = append(opts, otlptracegrpc.WithEndpoint(endpoint))
		if insecure(getenv) {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
	}
	// The exporter dials lazily: a collector that is down costs dropped spans, never a start.
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return Disabled(), fmt.Errorf("OTLP trace exporter: %w", err)
	}
	if name := getenv("OTEL_SERVICE_NAME"); name != "" {
		service = name
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		return Disabled(), fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Telemetry{provider: tp, sdk: tp}, nil
}

// configured reads whether the environment turns tracing on, and the OTLP endpoint.
func configured(getenv func(string) string) (on bool, endpoint string, err error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, "", nil
	}
	endpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if endpoint == "" {
		endpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	}
	switch exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exporter {
	case "none":
		return false, "", nil
	case "otlp":
		on = true
	case "":
		on = endpoint != ""
	default:
		return false, "", fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp or none", exporter)
	}
	if !on {
		return false, "", nil
	}
	protocol := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if protocol == "" {
		protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	if protocol != "" && protocol != "grpc" {
		return false, "", fmt.Errorf("OTLP protocol %q: only grpc is supported", protocol)
	}
	return true, endpoint, nil
}

func insecure(getenv func(string) string) bool {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_INSECURE", "OTEL_EXPORTER_OTLP_INSECURE"} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return strings.EqualFold(v, "true")
		}
	}
	return false
}

// Enabled reports whether spans are recorded and exported.
func (t *Telemetry) Enabled() bool { return t.sdk != nil }

// TracerProvider is the provider every instrumented part of the process takes its tracer from.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.provider }

// Tracer is the process's tracer of instrumentation scope name.
func (t *Telemetry) Tracer(name string) trace.Tracer { return t.provider.Tracer(name) }

// ForceFlush exports every span ended so far.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t.sdk == nil {
		return nil
	}
	return t.sdk.ForceFlush(ctx)
}

// Shutdown exports the spans still queued, then stops the exporter; ctx bounds the wait. Call it
// after the servers stopped, so their last spans are sent.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t.sdk == nil {
		return nil
	}
	if err := t.sdk.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("trace shutdown: %w", err)
	}
	return nil
}

// ShutdownWithin shuts t down (see Shutdown) giving it at most d, logging a failure; for a
// process's main, deferred once tracing is built.
func ShutdownWithin(t *Telemetry, log *slog.Logger, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("spans not flushed", "err", err)
	}
}

// TracerOf is the tracer named name of tp, or a no-op tracer when tp is nil: engines take a
// provider in their config and need not check it.
func TracerOf(tp trace.TracerProvider, name string) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(name)
}
