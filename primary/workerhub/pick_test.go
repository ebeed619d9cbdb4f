package workerhub

import (
	"testing"

	"github.com/turncli/turncli/primary/response"
)

// pick reserves the worker's slot for the command it places, before it lets go of the choice:
// the next pick already sees it, so two commands placed at once never both take the last slot.
func TestPickReservesTheSlotItGives(t *testing.T) {
	h := New(Config{})
	c := connectFake(h, "key-a", "one-slot", 1)

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
	for _, id := range []string{"w1", "w2", "w3"} {
		connectFake(h, "key-a", id, 0)
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
	connectFake(h, "key-a", "old-1", 0)
	connectFake(h, "key-a", "old-2", 0)
	for range 100 {
		if _, err := h.pick("key-a", &response.Binding{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	connectFake(h, "key-a", "new", 0)
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

// Asking which worker a new response would go to (a shell mode's preflight, before each
// response opens) takes no turn: with a probe before every pick, the picks still go round.
func TestAskingForTheNextWorkerTakesNoTurn(t *testing.T) {
	h := New(Config{})
	for _, id := range []string{"w1", "w2", "w3", "w4"} {
		connectFake(h, "key-a", id, 0).proxyURL = "http://" + id
	}
	got := map[string]int{}
	for range 40 {
		url, err := h.NextAgentCLIURL("key-a")
		if err != nil {
			t.Fatal(err)
		}
		c, err := h.pick("key-a", &response.Binding{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if url != c.proxyURL {
			t.Fatalf("asked for %s, the response then went to %s", url, c.proxyURL)
		}
		got[c.ident.ID]++
	}
	for _, id := range []string{"w1", "w2", "w3", "w4"} {
		if got[id] != 10 {
			t.Fatalf("responses per worker %v, want 10 each", got)
		}
	}
	if _, err := h.NextAgentCLIURL("key-b"); err == nil || err.Error() != `no worker with key "key-b" is connected` {
		t.Fatalf("a key without workers: %v", err)
	}
}

// connectFake adds a connection of key and id with capacity (0: no limit) to h, as Connect
// would, without a stream: enough for pick.
func connectFake(h *Hub, key, id string, capacity int) *conn {
	c := &conn{ident: Identity{Key: key, ID: id}, capacity: capacity, commands: map[string]*remoteCommand{}}
	if h.byKey[key] == nil {
		h.byKey[key] = map[string]*conn{}
	}
	h.byKey[key][id], h.byID[id] = c, c
	return c
}
