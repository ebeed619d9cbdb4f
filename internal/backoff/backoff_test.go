package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDelayDoublesUpToMax(t *testing.T) {
	p := Policy{Min: 100 * time.Millisecond, Max: time.Second}
	for failures, want := range map[int]time.Duration{
		1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 60: time.Second,
	} {
		if got := p.Delay(failures); got != want {
			t.Errorf("Delay(%d) = %v, want %v", failures, got, want)
		}
	}
}

// TestLoopStopsOnAPermanentError: the attempts go on through passing errors and stop at the
// first permanent one, which Loop returns; each wait is within [Delay/2, Delay] and the
// delay restarts from Min after an attempt that made progress.
func TestLoopStopsOnAPermanentError(t *testing.T) {
	p := Policy{Min: time.Millisecond, Max: 4 * time.Millisecond}
	refused := errors.New("refused")
	passing := errors.New("connection reset")
	// Attempts 1-4 fail without progress, 5 makes progress, 6 fails, 7 is refused.
	var n int
	attempt := func(context.Context) (bool, error) {
		n++
		switch n {
		case 5:
			return true, passing
		case 7:
			return false, refused
		}
		return false, passing
	}
	var waits []time.Duration
	err := p.Loop(t.Context(), attempt, func(err error) bool { return errors.Is(err, refused) },
		func(err error, wait time.Duration) {
			if !errors.Is(err, passing) {
				t.Errorf("onRetry heard %v, want the passing error", err)
			}
			waits = append(waits, wait)
		})
	if !errors.Is(err, refused) {
		t.Fatalf("Loop = %v, want the permanent error", err)
	}
	if n != 7 {
		t.Fatalf("%d attempts, want 7", n)
	}
	// The delays: 1, 2, 4, 4 ms; after progress 1 ms; then 2 ms.
	bounds := []time.Duration{1, 2, 4, 4, 1, 2}
	if len(waits) != len(bounds) {
		t.Fatalf("%d waits, want %d", len(waits), len(bounds))
	}
	for i, ms := range bounds {
		d := ms * time.Millisecond
		if waits[i] < d/2 || waits[i] > d {
			t.Errorf("wait %d = %v, want within [%v, %v]", i, waits[i], d/2, d)
		}
	}
}

// TestLoopEndsWithItsContext: a cancelled context ends Loop with nil, during a wait too.
func TestLoopEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := Policy{Min: time.Hour, Max: time.Hour}
	attempts := 0
	done := make(chan error, 1)
	go func() {
		done <- p.Loop(ctx, func(context.Context) (bool, error) { attempts++; return false, errors.New("down") }, nil,
			func(error, time.Duration) { cancel() })
	}()
	if err := <-done; err != nil {
		t.Fatalf("Loop = %v, want nil once its context ends", err)
	}
	if attempts != 1 {
		t.Fatalf("%d attempts, want 1", attempts)
	}
}
