package mcpgateway_test

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/otlpsink"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
)

// TestACallContinuesTheEnginesTrace: a tools/call's dispatch span is a child of the span its
// request's traceparent header names, or of the one its _meta names, which takes precedence
// (as `mindroom-agent mcp` reads it): the gateway spends no span of its own.
func TestACallContinuesTheEnginesTrace(t *testing.T) {
	sink, err := otlpsink.Start(true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.Stop)
	tel, err := telemetry.New(context.Background(), "mindroom-primary", func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": sink.Endpoint()}[k]
	})
	if err != nil || !tel.Enabled() {
		t.Fatalf("tracing: enabled %v, %v", tel.Enabled(), err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Telemetry = tel }))
	o := open(t, env)
	const (
		headerTrace, headerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		metaTrace, metaSpan     = "5cf92f3577b34da6a3ce929d0e0e4737", "11f067aa0ba902b8"
	)
	cs := connect(t, o, revisions[0], map[string]string{"traceparent": "00-" + headerTrace + "-" + headerSpan + "-01"})
	for _, tc := range []struct {
		name, trace, parent string
		meta                sdk.Meta
	}{
		{"FromTheHeader", headerTrace, headerSpan, nil},
		{"FromMeta", metaTrace, metaSpan, sdk.Meta{"traceparent": "00-" + metaTrace + "-" + metaSpan + "-01"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := &sdk.CallToolParams{Name: "test__echo", Arguments: map[string]any{}}
			params.Meta = tc.meta
			if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
				t.Fatalf("test__echo: %v, %v", res, err)
			}
			// The dispatch span ends as the call settles, which the answer may overtake: look
			// until it is exported or 10 s pass.
			var found *otlpsink.Span
			for deadline := time.Now().Add(10 * time.Second); found == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if err := tel.ForceFlush(context.Background()); err != nil {
					t.Fatal(err)
				}
				for _, s := range sink.Spans() {
					if s.Name == "dispatch test.echo" && s.TraceID == tc.trace {
						found = &s
					}
				}
			}
			if found == nil || found.ParentID != tc.parent {
				t.Fatalf("dispatch span in trace %s: %+v; want the child of %s", tc.trace, found, tc.parent)
			}
		})
	}
}
