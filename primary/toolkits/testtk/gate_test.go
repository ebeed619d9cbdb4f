package testtk

import (
	"context"
	"errors"
	"testing"

	"github.com/turncli/turncli/internal/canonjson"
)

type callOutcome struct {
	value string
	err   error
}

// startGate runs a gate call in the background and returns where its outcome will arrive.
func startGate(t *testing.T, ctx context.Context, tk *Toolkit, name string) <-chan callOutcome {
	t.Helper()
	call := newCall(t, Name, "gate", `{"name":"`+name+`"}`)
	done := make(chan callOutcome, 1)
	go func() {
		res, err := tk.Call(ctx, call)
		if err == nil {
			var b []byte
			b, err = canonjson.Marshal(res.Value)
			done <- callOutcome{value: string(b), err: err}
			return
		}
		done <- callOutcome{err: err}
	}()
	return done
}

func TestGate(t *testing.T) {
	t.Run("CallBlocksUntilReleased", func(t *testing.T) {
		tk := New()
		done := startGate(t, t.Context(), tk, "g")
		<-tk.Started("g")
		select {
		case o := <-done:
			t.Fatalf("gate returned before release: %+v", o)
		default:
		}
		tk.Release("g")
		if o := <-done; o.err != nil || o.value != `{"released":"g"}` {
			t.Fatalf("outcome = %+v", o)
		}
	})
	t.Run("ReleaseBeforeCallLetsItThrough", func(t *testing.T) {
		tk := New()
		tk.Release("early")
		tk.Release("early") // releasing twice is harmless
		o := <-startGate(t, t.Context(), tk, "early")
		if o.err != nil || o.value != `{"released":"early"}` {
			t.Fatalf("outcome = %+v", o)
		}
		<-tk.Started("early")
	})
	t.Run("ReleasedGateStaysOpenForLaterCalls", func(t *testing.T) {
		tk := New()
		first := startGate(t, t.Context(), tk, "g")
		<-tk.Started("g")
		tk.Release("g")
		<-first
		if o := <-startGate(t, t.Context(), tk, "g"); o.err != nil {
			t.Fatalf("second call: %v", o.err)
		}
	})
	t.Run("ReleaseOpensOnlyTheNamedGate", func(t *testing.T) {
		tk := New()
		ctx, cancel := context.WithCancel(t.Context())
		other := startGate(t, ctx, tk, "other")
		<-tk.Started("other")
		tk.Release("g")
		cancel()
		if o := <-other; !errors.Is(o.err, context.Canceled) {
			t.Fatalf("other gate outcome = %+v, want context.Canceled", o)
		}
	})
	t.Run("CancelledCallReturnsContextError", func(t *testing.T) {
		tk := New()
		ctx, cancel := context.WithCancel(t.Context())
		done := startGate(t, ctx, tk, "never")
		<-tk.Started("never")
		cancel()
		if o := <-done; !errors.Is(o.err, context.Canceled) {
			t.Fatalf("outcome = %+v, want context.Canceled", o)
		}
	})
	t.Run("TheReleaseFunctionOpensTheNamedGate", func(t *testing.T) {
		tk := New()
		done := startGate(t, t.Context(), tk, "g")
		<-tk.Started("g")
		res, err := tk.Call(t.Context(), newCall(t, Name, "release", `{"name":"g"}`))
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := canonjson.Marshal(res.Value); string(b) != `{"released":"g"}` {
			t.Fatalf("release result %s", b)
		}
		if o := <-done; o.err != nil || o.value != `{"released":"g"}` {
			t.Fatalf("gate outcome = %+v", o)
		}
	})
	t.Run("StartedIsOpenUntilACallArrives", func(t *testing.T) {
		tk := New()
		tk.Release("g")
		select {
		case <-tk.Started("g"):
			t.Fatal("Started closed with no call")
		default:
		}
	})
}
