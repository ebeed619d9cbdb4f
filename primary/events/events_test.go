package events

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

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

func TestARedactingBusPublishesNoSecret(t *testing.T) {
	const secret = "live-secret-value-0123"
	b := NewRedacting(func(s string) string { return strings.ReplaceAll(s, secret, "(redacted)") })
	ch, stop := b.Subscribe(4)
	defer stop()
	clean := map[string]any{"label": "tests"}
	b.Publish("job.started", "job/1", clean)
	b.Publish("prompt.created", "prompt/1", map[string]any{"input": map[string]any{"note": "use " + secret}})
	if ev := <-ch; !reflect.DeepEqual(ev.Data, clean) {
		t.Errorf("data without a secret = %#v, want it as published", ev.Data)
	}
	ev := <-ch
	raw, ok := ev.Data.(json.RawMessage)
	if !ok || string(raw) != `{"input":{"note":"use (redacted)"}}` {
		t.Errorf("data with a secret = %#v, want its redacted JSON", ev.Data)
	}
}
