package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/turncli/turncli/internal/otlpsink"
	"github.com/turncli/turncli/internal/telemetry"
)

// BenchmarkExportedSpan is the cost of one span like a call's dispatch span, started under a
// remote parent, ended, batched and exported over OTLP/gRPC to a receiver on loopback. Raise
// OTEL_BSP_MAX_QUEUE_SIZE to export every span: at this rate the default queue drops some,
// and exported/op says how many got through.
func BenchmarkExportedSpan(b *testing.B) {
	sink, err := otlpsink.Start(false)
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Stop()
	tel, err := telemetry.New(context.Background(), "bench", func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": sink.Endpoint()}[k]
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	tr := tel.Tracer("bench")
	parent := telemetry.Extract(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "")
	sc := trace.SpanContextFromContext(parent)
	b.ReportAllocs()
	for b.Loop() {
		ctx := trace.ContextWithSpanContext(context.Background(), sc)
		_, span := tr.Start(ctx, "dispatch test.echo", trace.WithAttributes(attribute.String("turncli.call_id", "0192f0c4-1d6f-7c3e-9a7a-3f1d2c4b5a70")))
		span.SetStatus(codes.Ok, "")
		span.End()
	}
	if err := tel.ForceFlush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(sink.Count())/float64(b.N), "exported/op")
}
