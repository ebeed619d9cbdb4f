package response

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/turncli/turncli/internal/bashexec"
)

// tracerName is the instrumentation scope of the response engine's spans.
const tracerName = "github.com/turncli/turncli/primary/response"

// The engine's spans, each a child of the context that caused it: a Bash command's span (of
// the runtime's RunBash, or of the call that runs a nested shell) whose context its shell gets
// as TRACEPARENT; and a call's dispatch to its toolkit, a child of the request that admitted
// it, which outlives that request and carries the trace on to the tool.

// startBash starts the span of a command run in window w.
func (r *Response) startBash(ctx context.Context, w *Window) (context.Context, trace.Span) {
	return r.mgr.tracer.Start(ctx, "bash", trace.WithAttributes(
		attribute.String("turncli.response_id", r.id), attribute.String("turncli.bash_call_id", w.bashCallID)))
}

// startDispatch starts the span of running rc in its toolkit, a child of the span of admitted,
// the context rc was admitted in, and returns the context the toolkit's call runs in: the
// response's lifetime (the admitting request ends first), carrying that span. The span runs
// from admission to settlement; a call cancelled before it reached its tool ends it as an
// error too.
func (r *Response) startDispatch(admitted context.Context, rc *receipt) (context.Context, trace.Span) {
	_, span := r.mgr.tracer.Start(admitted, "dispatch "+rc.toolkit+"."+rc.function)
	if span.IsRecording() {
		// The call id alone: the response is on the Bash span above it, and with every call
		// sampled each attribute is paid for at start, at export and on the wire. Set after
		// the sampler decided (it follows the parent), so an unsampled call never formats it.
		span.SetAttributes(attribute.String("turncli.call_id", rc.id.String()))
	}
	return trace.ContextWithSpan(r.ctx, span), span
}

// endBash ends a command's span with its exit, or with why it could not run.
func endBash(span trace.Span, res bashexec.Result, err error) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("turncli.exit_code", res.ExitCode),
			attribute.Bool("turncli.timed_out", res.TimedOut), attribute.Bool("turncli.cancelled", res.Cancelled))
		if err != nil {
			span.SetStatus(otelcodes.Error, err.Error())
		}
	}
	span.End()
}

// endDispatch ends a dispatch span with the call's status: Ok when it completed, else Error
// described by the status (failed or cancelled).
func endDispatch(span trace.Span, s Status) {
	if s == Completed {
		span.SetStatus(otelcodes.Ok, "")
	} else {
		span.SetStatus(otelcodes.Error, s.String())
	}
	span.End()
}
