package clock_test

import (
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock"
)

func TestSystemIsTheOperatingSystemsClock(t *testing.T) {
	before := time.Now()
	now := clock.System.Now()
	if now.Before(before) || now.Sub(before) > time.Second {
		t.Fatalf("System.Now %v, time.Now %v", now, before)
	}
	tm, c := clock.System.NewTimer(time.Millisecond)
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatal("a timer of a millisecond did not fire")
	}
	if tm.Stop() {
		t.Error("Stop of a fired timer reported it was pending")
	}
	tk, ticks := clock.System.NewTicker(time.Millisecond)
	defer tk.Stop()
	for range 2 {
		select {
		case <-ticks:
		case <-time.After(10 * time.Second):
			t.Fatal("a ticker of a millisecond did not tick")
		}
	}
}
