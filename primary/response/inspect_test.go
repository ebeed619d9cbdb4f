package response

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/toolkits/testtk"
)

// inspectEnv is a Manager over a registry with the test toolkit; shells never run.
func inspectEnv(t *testing.T) (*Manager, *testtk.Toolkit) {
	t.Helper()
	reg := catalog.NewRegistry()
	tk := testtk.New()
	if err := reg.Register(context.Background(), tk); err != nil {
		t.Fatal(err)
	}
	return NewManager(Config{Registry: reg}), tk
}

func openResponse(t *testing.T, m *Manager, spec Spec) *Response {
	t.Helper()
	r, err := m.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// call admits test.<function> with args into w and returns its id.
func call(t *testing.T, r *Response, w *Window, function, args string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	if _, err := r.Call(t.Context(), w.token, CallRequest{ID: id, Toolkit: testtk.Name, Function: function, Arguments: []byte(args)}); err != nil {
		t.Fatalf("Call %s: %v", function, err)
	}
	return id
}

// settled waits until call id is terminal.
func settled(t *testing.T, r *Response, id uuid.UUID) {
	t.Helper()
	if _, err := r.GetCall(context.Background(), id, time.Minute); err != nil {
		t.Fatal(err)
	}
}

func TestInspect(t *testing.T) {
	t.Run("ShowsIdentityWindowsAndReceiptsButNoSecret", func(t *testing.T) {
		m, tk := inspectEnv(t)
		r := openResponse(t, m, Spec{
			Agent: "code", Requester: "@sam:example.org", Channel: "!room", Thread: "$t1", ShellMode: "minimal",
			WorkerKey: "key-a", Origin: OriginBackground, Flags: []string{FlagProgressReport},
		})
		r.Binding().Bind("worker-7")
		w, err := r.OpenWindow("bash-1")
		if err != nil {
			t.Fatal(err)
		}
		gate := call(t, r, w, "gate", `{"name":"g"}`)
		<-tk.Started("g")
		echo := call(t, r, w, "echo", `{"a":1}`)
		settled(t, r, echo)

		in := r.Inspect(20)
		if in.ID != r.ID() || in.Agent != "code" || in.Requester != "@sam:example.org" || in.Channel != "!room" || in.Thread != "$t1" ||
			in.ShellMode != "minimal" || in.WorkerKey != "key-a" || in.BoundWorker != "worker-7" || in.Origin != OriginBackground ||
			len(in.Flags) != 1 || in.Flags[0] != FlagProgressReport || !in.GrantExpires.Equal(r.GrantExpires()) ||
			in.Closing || in.Fenced || in.Unsettled != 1 || in.ReceiptCount != 2 {
			t.Fatalf("Inspect = %+v", in)
		}
		if len(in.Windows) != 1 || in.Windows[0] != (WindowInspection{BashCallID: "bash-1", State: "open", Admitted: 2, Unsettled: 1}) {
			t.Fatalf("windows = %+v", in.Windows)
		}
		if len(in.Receipts) != 2 {
			t.Fatalf("receipts = %+v", in.Receipts)
		}
		newest, oldest := in.Receipts[0], in.Receipts[1]
		if newest.CallID != echo.String() || newest.Toolkit != testtk.Name || newest.Function != "echo" || newest.Status != Completed ||
			newest.Parent != "bash-1" || string(newest.Outcome) != `{"a":1}` {
			t.Fatalf("newest receipt = %+v", newest)
		}
		if oldest.CallID != gate.String() || oldest.Status != Running || string(oldest.Outcome) != "null" {
			t.Fatalf("oldest receipt = %+v", oldest)
		}
		dump := fmt.Sprintf("%#v", in)
		if strings.Contains(dump, r.token) || strings.Contains(dump, w.token) {
			t.Fatal("the inspection holds the grant or a window token")
		}
		tk.Release("g")
		settled(t, r, gate)
	})

	t.Run("LatestReceiptsComeFromLiveWindowsFirst", func(t *testing.T) {
		m, tk := inspectEnv(t)
		r := openResponse(t, m, Spec{Agent: "code"})
		done, err := r.OpenWindow("a-done")
		if err != nil {
			t.Fatal(err)
		}
		first := call(t, r, done, "echo", `{"n":1}`)
		second := call(t, r, done, "echo", `{"n":2}`)
		settled(t, r, first)
		settled(t, r, second)
		r.DrainWindow(done)
		live, err := r.OpenWindow("b-live")
		if err != nil {
			t.Fatal(err)
		}
		running := call(t, r, live, "gate", `{"name":"live"}`)
		<-tk.Started("live")

		in := r.Inspect(2)
		if len(in.Windows) != 2 || in.Windows[0].BashCallID != "b-live" || in.Windows[0].State != "open" ||
			in.Windows[1] != (WindowInspection{BashCallID: "a-done", State: "closed", Admitted: 2}) {
			t.Fatalf("windows = %+v", in.Windows)
		}
		if in.ReceiptCount != 3 || len(in.Receipts) != 2 || in.Receipts[0].CallID != running.String() || in.Receipts[1].CallID != second.String() {
			t.Fatalf("receipts = %+v (count %d)", in.Receipts, in.ReceiptCount)
		}
		if none := r.Inspect(0); len(none.Receipts) != 0 || none.ReceiptCount != 3 {
			t.Fatalf("Inspect(0) = %+v", none)
		}
		tk.Release("live")
		settled(t, r, running)
	})

	t.Run("ListHoldsOnlyLiveResponsesByID", func(t *testing.T) {
		m, _ := inspectEnv(t)
		a := openResponse(t, m, Spec{Agent: "a"})
		b := openResponse(t, m, Spec{Agent: "b"})
		c := openResponse(t, m, Spec{Agent: "c"})
		b.Close()
		list := m.List()
		if len(list) != 2 || list[0].ID() > list[1].ID() {
			t.Fatalf("List = %v", list)
		}
		for _, r := range list {
			if r != a && r != c {
				t.Fatalf("List holds %s, which was closed", r.ID())
			}
		}
		if in := b.Inspect(20); !in.Closing || len(in.Receipts) != 0 {
			t.Fatalf("closed response inspects as %+v", in)
		}
	})

	t.Run("InspectingWhileCallsRunIsSafe", func(t *testing.T) {
		m, _ := inspectEnv(t)
		r := openResponse(t, m, Spec{Agent: "code"})
		var wg sync.WaitGroup
		for i := range 4 {
			w, err := r.OpenWindow(fmt.Sprintf("bash-%d", i))
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				for j := range 12 { // 48 in all: under MaxConcurrent even if none settled yet
					req := CallRequest{ID: uuid.New(), Toolkit: testtk.Name, Function: "echo", Arguments: fmt.Appendf(nil, `{"j":%d}`, j)}
					if _, err := r.Call(t.Context(), w.token, req); err != nil {
						t.Errorf("Call: %v", err)
					}
				}
				r.DrainWindow(w)
			})
		}
		for range 50 {
			if in := r.Inspect(20); len(in.Receipts) > 20 {
				t.Fatalf("%d receipts, want at most 20", len(in.Receipts))
			}
		}
		wg.Wait()
		if in := r.Inspect(100); in.ReceiptCount != 48 || len(in.Receipts) != 48 || in.Unsettled != 0 {
			t.Fatalf("after the calls: count %d, %d receipts, %d unsettled", in.ReceiptCount, len(in.Receipts), in.Unsettled)
		}
	})
}
