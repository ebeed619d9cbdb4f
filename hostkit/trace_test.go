package hostkit_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/turncli/turncli/hostkit"
	"github.com/turncli/turncli/internal/testenv"
)

// With tracing off everywhere, a call still runs in the trace of the shell that made it: every
// hop keeps the context it received.
func TestACallContinuesTheTraceOfItsShell(t *testing.T) {
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	env := testenv.Start(t)
	seen := make(chan trace.SpanContext, 1)
	traced := hostkit.Func("add", "Adds.", func(ctx context.Context, c hostkit.Call, in AddInput) (AddOutput, error) {
		seen <- trace.SpanContextFromContext(ctx)
		return add(ctx, c, in)
	})
	runHost(t, env, nil, hostkit.Toolkit{Name: "traced_tk", Functions: []hostkit.Function{traced}}).waitRegistered()
	sh := openShell(t, env, env.Open(t))
	sh.env["TRACEPARENT"] = traceparent
	expectReceipt(t, sh.call("traced_tk.add", `{"a":1,"b":2}`), "completed", `{"sum":3}`)
	sc := receive(t, seen)
	if got := sc.TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("the handler ran in trace %s, want the shell's", got)
	}
}
