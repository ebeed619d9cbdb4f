package response

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/toolkits/testtk"
)

// TestADispatchSpanIsAChildOfTheSpanItWasAdmittedIn: a call's dispatch span names the call's
// function, carries its id, ends Ok when the call completed, and has for parent the span of the
// context the call was admitted in, local (a request's server span) or remote (the
// traceparent of a shell's request), marked as such.
func TestADispatchSpanIsAChildOfTheSpanItWasAdmittedIn(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reg := catalog.NewRegistry()
	if err := reg.Register(context.Background(), testtk.New()); err != nil {
		t.Fatal(err)
	}
	m := NewManager(Config{Registry: reg, Tracing: tp})
	r, err := m.Open(Spec{Agent: "tester", Toolkits: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := r.OpenWindow("bash-1")
	if err != nil {
		t.Fatal(err)
	}

	call := func(t *testing.T, admitted context.Context) (uuid.UUID, sdktrace.ReadOnlySpan) {
		t.Helper()
		id := uuid.New()
		if _, err := r.Call(admitted, w.token, CallRequest{ID: id, Toolkit: "test", Function: "echo", Arguments: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		v, err := r.Receipt(context.Background(), id, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if v.Status != Completed {
			t.Fatalf("the call ended %v", v.Status)
		}
		for _, s := range rec.Ended() {
			for _, a := range s.Attributes() {
				if a == attribute.String("turncli.call_id", id.String()) {
					return id, s
				}
			}
		}
		t.Fatalf("no ended span carries call id %s", id)
		return id, nil
	}
	check := func(t *testing.T, s sdktrace.ReadOnlySpan, parent trace.SpanContext, remote bool) {
		t.Helper()
		if s.Name() != "dispatch test.echo" {
			t.Errorf("span name %q", s.Name())
		}
		if s.Status().Code != otelcodes.Ok {
			t.Errorf("a completed call's span ended %v", s.Status())
		}
		if s.SpanContext().TraceID() != parent.TraceID() || s.Parent().SpanID() != parent.SpanID() {
			t.Errorf("parent %v in trace %v, want %v in %v", s.Parent().SpanID(), s.SpanContext().TraceID(), parent.SpanID(), parent.TraceID())
		}
		if s.Parent().IsRemote() != remote {
			t.Errorf("parent marked remote=%v, want %v", s.Parent().IsRemote(), remote)
		}
	}

	t.Run("LocalParent", func(t *testing.T) {
		ctx, request := tp.Tracer("test").Start(context.Background(), "request")
		defer request.End()
		_, s := call(t, ctx)
		check(t, s, request.SpanContext(), false)
	})
	t.Run("RemoteParent", func(t *testing.T) {
		ctx := telemetry.Extract(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "")
		_, s := call(t, ctx)
		check(t, s, trace.SpanContextFromContext(ctx), true)
	})
}
