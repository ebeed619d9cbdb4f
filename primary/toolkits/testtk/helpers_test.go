package testtk

import (
	"context"
	"sync"
	"testing"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
)

// recorder is a catalog.Progress that remembers the order of reports.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Waiting() { r.add("waiting") }
func (r *recorder) Running() { r.add("running") }

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// newCall builds a call as the primary admits it: arguments parsed strictly from JSON.
func newCall(t *testing.T, toolkit, function, args string) catalog.Call {
	t.Helper()
	v, err := canonjson.Parse([]byte(args))
	if err != nil {
		t.Fatalf("parse arguments %s: %v", args, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("arguments %s are not an object", args)
	}
	return catalog.Call{
		ID:         "00000000-0000-4000-8000-000000000001",
		Toolkit:    toolkit,
		Function:   function,
		Arguments:  m,
		Identity:   catalog.Identity{ResponseID: "resp-1", Agent: "agent-a", Requester: "user-r", Channel: "chan-c", Thread: "thread-t"},
		BashCallID: "bash-1",
		Progress:   &recorder{},
		Lifetime:   context.Background(),
	}
}

// canonical returns the canonical JSON of a result value.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := canonjson.Marshal(v)
	if err != nil {
		t.Fatalf("result is not a JSON value: %v", err)
	}
	return string(b)
}
