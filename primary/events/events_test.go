package events

import "testing"

func TestSubscribersGetEventsInOrderAndALaggardGetsAGap(t *testing.T) {
	b := New()
	fast, stopFast := b.Subscribe(10)
	defer stopFast()
	slow, stopSlow := b.Subscribe(2)
	for i := range 5 {
		b.Publish("thing.changed", "thing/1", i)
	}
	for i := range 5 {
		ev := <-fast
		if ev.Seq != uint64(i+1) || ev.Data != i || ev.Kind != "thing.changed" {
			t.Fatalf("fast got %+v, want seq %d", ev, i+1)
		}
	}
	// The slow one holds 2; the rest were dropped: its next event after draining is a gap.
	if a, b := <-slow, <-slow; a.Seq != 1 || b.Seq != 2 {
		t.Fatalf("slow got %d, %d", a.Seq, b.Seq)
	}
	b.Publish("thing.changed", "thing/1", 5)
	if gap := <-slow; gap.Kind != KindGap {
		t.Fatalf("after lagging: %+v, want a gap", gap)
	}
	if ev := <-slow; ev.Seq != 6 {
		t.Fatalf("after the gap: %+v", ev)
	}
	stopSlow()
	stopSlow() // twice is fine
	if _, open := <-slow; open {
		t.Fatal("channel open after unsubscribe")
	}
	b.Publish("thing.changed", "thing/1", 6) // no send on a closed channel
}
