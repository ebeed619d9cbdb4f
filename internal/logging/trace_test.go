package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestTraceIDs(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		Remote:  true,
	})
	for _, tc := range []struct {
		name          string
		ctx           context.Context
		trace, span   string
		loggerWithArg bool
	}{
		{name: "RecordInSpanContextCarriesItsIDs", ctx: trace.ContextWithRemoteSpanContext(context.Background(), sc),
			trace: "4bf92f3577b34da6a3ce929d0e0e4736", span: "00f067aa0ba902b7"},
		{name: "DerivedLoggerKeepsAddingIDs", ctx: trace.ContextWithRemoteSpanContext(context.Background(), sc), loggerWithArg: true,
			trace: "4bf92f3577b34da6a3ce929d0e0e4736", span: "00f067aa0ba902b7"},
		{name: "RecordWithoutSpanHasNoIDs", ctx: context.Background()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := New(&buf, FormatJSON, "info")
			if err != nil {
				t.Fatal(err)
			}
			if tc.loggerWithArg {
				log = log.With("component", "x").WithGroup("g")
			}
			log.InfoContext(tc.ctx, "called")
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			ids := line
			if tc.loggerWithArg {
				ids, _ = line["g"].(map[string]any)
			}
			if tc.trace == "" {
				if _, ok := line["trace_id"]; ok {
					t.Fatalf("trace_id in %s", buf.String())
				}
				return
			}
			if ids["trace_id"] != tc.trace || ids["span_id"] != tc.span {
				t.Fatalf("line %s: want trace_id %s span_id %s", buf.String(), tc.trace, tc.span)
			}
		})
	}
}
