package clocktest_test

import (
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock/clocktest"
)

var start = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// received returns the value waiting on c, if any, without blocking.
func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-c:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestFakeTimeMovesOnlyByAdvance(t *testing.T) {
	f := clocktest.NewFake(start)
	if !f.Now().Equal(start) {
		t.Fatalf("Now %v, want %v", f.Now(), start)
	}
	f.Advance(90 * time.Minute)
	if want := start.Add(90 * time.Minute); !f.Now().Equal(want) {
		t.Fatalf("Now %v after Advance, want %v", f.Now(), want)
	}
}

func TestFakeTimer(t *testing.T) {
	t.Run("FiresOnceWhenItsTimeIsReachedWithThatTime", func(t *testing.T) {
		f := clocktest.NewFake(start)
		_, c := f.NewTimer(time.Second)
		f.Advance(time.Second - time.Nanosecond)
		if _, ok := received(c); ok {
			t.Fatal("fired before its time")
		}
		f.Advance(time.Hour)
		if got, ok := received(c); !ok || !got.Equal(start.Add(time.Second)) {
			t.Fatalf("received %v, %v; want the time it was due", got, ok)
		}
		f.Advance(time.Hour)
		if _, ok := received(c); ok {
			t.Fatal("fired twice")
		}
		if f.Pending() != 0 {
			t.Fatalf("%d pending after it fired", f.Pending())
		}
	})
	t.Run("OfZeroFiresAtOnce", func(t *testing.T) {
		f := clocktest.NewFake(start)
		_, c := f.NewTimer(0)
		if got, ok := received(c); !ok || !got.Equal(start) {
			t.Fatalf("received %v, %v; want now", got, ok)
		}
	})
	t.Run("StoppedNeverFiresAndReportsItWasPending", func(t *testing.T) {
		f := clocktest.NewFake(start)
		tm, c := f.NewTimer(time.Second)
		if !tm.Stop() {
			t.Fatal("Stop of a pending timer reported it was not pending")
		}
		f.Advance(time.Hour)
		if _, ok := received(c); ok {
			t.Fatal("a stopped timer fired")
		}
		if tm.Stop() {
			t.Fatal("a second Stop reported it was pending")
		}
	})
	t.Run("StopDropsAValueNobodyReceived", func(t *testing.T) {
		f := clocktest.NewFake(start)
		tm, c := f.NewTimer(time.Second)
		f.Advance(time.Second)
		if tm.Stop() {
			t.Fatal("Stop of a fired timer reported it was pending")
		}
		if _, ok := received(c); ok {
			t.Fatal("a stale time was received after Stop")
		}
	})
	t.Run("ResetMovesItsTimeFromNow", func(t *testing.T) {
		f := clocktest.NewFake(start)
		tm, c := f.NewTimer(time.Second)
		f.Advance(500 * time.Millisecond)
		if !tm.Reset(time.Second) {
			t.Fatal("Reset of a pending timer reported it was not pending")
		}
		f.Advance(999 * time.Millisecond)
		if _, ok := received(c); ok {
			t.Fatal("fired at its first time after Reset")
		}
		f.Advance(time.Millisecond)
		if got, ok := received(c); !ok || !got.Equal(start.Add(1500*time.Millisecond)) {
			t.Fatalf("received %v, %v; want its reset time", got, ok)
		}
		if tm.Reset(time.Second) {
			t.Fatal("Reset of a fired timer reported it was pending")
		}
		f.Advance(time.Second)
		if _, ok := received(c); !ok {
			t.Fatal("a fired timer did not fire again after Reset")
		}
	})
}

func TestFakeTimersDueInOneAdvanceEachFireWithTheirOwnTime(t *testing.T) {
	f := clocktest.NewFake(start)
	due := []time.Duration{3 * time.Second, time.Second, 2 * time.Second, time.Second}
	var chans []<-chan time.Time
	for _, d := range due {
		_, c := f.NewTimer(d)
		chans = append(chans, c)
	}
	f.Advance(time.Minute)
	for i, c := range chans {
		if got, ok := received(c); !ok || !got.Equal(start.Add(due[i])) {
			t.Errorf("timer %d fired with %v, %v; want %v", i, got, ok, start.Add(due[i]))
		}
	}
	if !f.Now().Equal(start.Add(time.Minute)) {
		t.Errorf("Now %v after the timers fired, want the end of the advance", f.Now())
	}
}

func TestFakeTicker(t *testing.T) {
	t.Run("TicksEveryIntervalItIsAdvancedThrough", func(t *testing.T) {
		f := clocktest.NewFake(start)
		tk, c := f.NewTicker(time.Minute)
		for i := 1; i <= 3; i++ {
			f.Advance(time.Minute)
			if got, ok := received(c); !ok || !got.Equal(start.Add(time.Duration(i)*time.Minute)) {
				t.Fatalf("tick %d: %v, %v", i, got, ok)
			}
		}
		tk.Stop()
		f.Advance(time.Hour)
		if _, ok := received(c); ok {
			t.Fatal("a stopped ticker ticked")
		}
	})
	t.Run("DropsTicksNobodyReceived", func(t *testing.T) {
		f := clocktest.NewFake(start)
		_, c := f.NewTicker(time.Minute)
		f.Advance(10 * time.Minute)
		if got, ok := received(c); !ok || !got.Equal(start.Add(time.Minute)) {
			t.Fatalf("first tick %v, %v; want the first one due", got, ok)
		}
		if _, ok := received(c); ok {
			t.Fatal("more than one tick was kept for a slow receiver")
		}
		f.Advance(time.Minute)
		if got, ok := received(c); !ok || !got.Equal(start.Add(11*time.Minute)) {
			t.Fatalf("next tick %v, %v; want the one due at 11 minutes", got, ok)
		}
	})
	t.Run("ResetChangesItsInterval", func(t *testing.T) {
		f := clocktest.NewFake(start)
		tk, c := f.NewTicker(time.Minute)
		tk.Reset(time.Hour)
		f.Advance(59 * time.Minute)
		if _, ok := received(c); ok {
			t.Fatal("ticked at its old interval")
		}
		f.Advance(time.Minute)
		if _, ok := received(c); !ok {
			t.Fatal("did not tick at its new interval")
		}
	})
}

func TestWaitForPendingReturnsOnceATimerIsStarted(t *testing.T) {
	f := clocktest.NewFake(start)
	fired := make(chan time.Time)
	go func() {
		_, c := f.NewTimer(time.Hour)
		fired <- <-c
	}()
	f.WaitForPending(1)
	f.Advance(time.Hour)
	if got := <-fired; !got.Equal(start.Add(time.Hour)) {
		t.Fatalf("the goroutine's timer fired with %v", got)
	}
}
