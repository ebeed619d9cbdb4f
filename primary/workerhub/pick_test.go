package workerhub

import (
	"testing"

	"github.com/turncli/turncli/primary/response"
)

// pick reserves the worker's slot for the command it places, before it lets go of the choice:
// the next pick already sees it, so two commands placed at once never both take the last slot.
func TestPickReservesTheSlotItGives(t *testing.T) {
	h := New(Config{})
	c := &conn{ident: Identity{Key: "key-a", ID: "one-slot"}, capacity: 1, commands: map[string]*remoteCommand{}}
	h.byKey["key-a"] = map[string]*conn{c.ident.ID: c}
	h.byID[c.ident.ID] = c

	got, err := h.pick("key-a", &response.Binding{}, &remoteCommand{id: "1"})
	if err != nil || got != c || c.load() != 1 {
		t.Fatalf("first pick = %v, %v with load %d; want the worker, its slot taken", got, err, c.load())
	}
	if _, err := h.pick("key-a", &response.Binding{}, &remoteCommand{id: "2"}); err == nil || err.Error() != `every worker with key "key-a" is at capacity` {
		t.Fatalf("second pick = %v; want the key at capacity", err)
	}
	c.forget("1")
	if _, err := h.pick("key-a", &response.Binding{}, &remoteCommand{id: "3"}); err != nil {
		t.Fatalf("a pick after the slot was freed: %v", err)
	}
}

// Idle workers take turns: each new response goes to the equally idle worker given the fewest.
func TestPickTakesTurnsAmongIdleWorkers(t *testing.T) {
	h := New(Config{})
	h.byKey["key-a"] = map[string]*conn{}
	for _, id := range []string{"w1", "w2", "w3"} {
		c := &conn{ident: Identity{Key: "key-a", ID: id}, commands: map[string]*remoteCommand{}}
		h.byKey["key-a"][id], h.byID[id] = c, c
	}
	got := map[string]int{}
	for range 30 {
		c, err := h.pick("key-a", &response.Binding{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got[c.ident.ID]++
	}
	for _, id := range []string{"w1", "w2", "w3"} {
		if got[id] != 10 {
			t.Fatalf("responses per worker %v, want 10 each", got)
		}
	}
}

// A worker that connects later joins the turns at once instead of winning every tie until it
// has caught up with the others.
func TestPickGivesANewWorkerItsTurnNotEveryTurn(t *testing.T) {
	h := New(Config{})
	h.byKey["key-a"] = map[string]*conn{}
	add := func(id string) {
		c := &conn{ident: Identity{Key: "key-a", ID: id}, commands: map[string]*remoteCommand{}}
		h.byKey["key-a"][id], h.byID[id] = c, c
	}
	add("old-1")
	add("old-2")
	for range 100 {
		if _, err := h.pick("key-a", &response.Binding{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	add("new")
	got := map[string]int{}
	for range 9 {
		c, err := h.pick("key-a", &response.Binding{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got[c.ident.ID]++
	}
	if got["new"] != 3 || got["old-1"] != 3 || got["old-2"] != 3 {
		t.Fatalf("the next 9 responses went %v, want 3 to each worker", got)
	}
}
