package agentcli_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

const (
	concurrencyLimit = "At most 64 CLI operations may run at once"
	receiptLimit     = "already holds 1024 CLI call receipts"
	fenced           = "Call cancelled before dispatch"
	rebuilding       = "Agent tool catalog is being rebuilt; retry shortly"
)

// Section 11: at most 64 calls and describes are admitted at once; settling one admits again.
func TestAtMost64OperationsRunAtOnce(t *testing.T) {
	t.Parallel()
	loading := make(chan struct{}, 1)
	loaded := make(chan struct{})
	slow := &fakeToolkit{name: "slow", description: "Loads when the test says so.", deferred: true,
		load: func(ctx context.Context) error {
			loading <- struct{}{}
			select {
			case <-loaded:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}}
	env := startEnv(t, slow)
	tk := env.Primary.Internals().TestToolkit
	s := open(t, env)
	other := open(t, env)

	// 63 gate calls and one describe that waits for its toolkit to load: 64 admitted operations.
	ids := make([]string, 63)
	for i := range ids {
		ids[i] = s.call("test", "gate", gateArgs(fmt.Sprintf("limit-%d", i))).CallID
	}
	for i := range ids {
		<-tk.Started(fmt.Sprintf("limit-%d", i))
	}
	described := make(chan reply, 1)
	go func() {
		r, _ := s.send(http.MethodPost, operationsPath, strings.NewReader(describeOp("slow", "missing")))
		described <- r
	}()
	<-loading

	t.Run("The65thCallIsRefused", func(t *testing.T) {
		requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`)), http.StatusUnprocessableEntity, concurrencyLimit)
	})
	t.Run("The65thDescribeIsRefused", func(t *testing.T) {
		requireStatus(t, s.post(describeOp("test", "echo")), http.StatusUnprocessableEntity, concurrencyLimit)
	})
	t.Run("TheLimitHoldsInEveryWindow", func(t *testing.T) {
		requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`), inWindow(s.openWindow("b2"))), http.StatusUnprocessableEntity, concurrencyLimit)
	})
	t.Run("DiscoveryReplaysAndReadsStillWork", func(t *testing.T) {
		s.ok(s.post(`{"operation":"tools.list"}`))
		s.ok(s.post(`{"operation":"tools.search","query":"echo"}`))
		s.ok(s.post(`{"operation":"context.list"}`))
		decodeReceipt(t, s.post(callOp(ids[0], "test", "gate", gateArgs("limit-0"))))
		decodeReceipt(t, s.get(ids[0], ""))
	})
	t.Run("AnotherResponseHasItsOwnLimit", func(t *testing.T) {
		rc := other.call("test", "echo", `{}`)
		other.await(rc.CallID)
	})
	t.Run("SettlingACallAdmitsOneMore", func(t *testing.T) {
		tk.Release("limit-0")
		s.await(ids[0])
		next := s.call("test", "gate", gateArgs("limit-next"))
		<-tk.Started("limit-next")
		requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`)), http.StatusUnprocessableEntity, concurrencyLimit)
		tk.Release("limit-next")
		s.await(next.CallID)
	})
	t.Run("SettlingADescribeAdmitsOneMore", func(t *testing.T) {
		close(loaded)
		requireStatus(t, <-described, http.StatusUnprocessableEntity, "Unknown function")
		rc := s.call("test", "echo", `{}`)
		s.await(rc.CallID)
	})
	for i := range ids {
		tk.Release(fmt.Sprintf("limit-%d", i))
	}
	for _, id := range ids {
		s.await(id)
	}
}

// Section 11: a response holds at most 1024 receipts; a replay of one of them still answers.
func TestAtMost1024ReceiptsPerResponse(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	// Eight callers, each waiting for its call to end before the next: never near 64 at once.
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < len(ids); i += 8 {
				r, err := s.send(http.MethodPost, operationsPath, strings.NewReader(callOp(ids[i], "test", "echo", fmt.Sprintf(`{"i":%d}`, i))))
				if err == nil && r.code != http.StatusOK {
					err = fmt.Errorf("call %d: %s", i, r)
				}
				if err == nil {
					r, err = s.send(http.MethodGet, callsPath+ids[i]+"?wait=60", nil)
				}
				if err == nil && !strings.Contains(string(r.body), `"status":"completed"`) {
					err = fmt.Errorf("call %d did not complete: %s", i, r)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	t.Run("The1025thCallIsRefused", func(t *testing.T) {
		requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`)), http.StatusUnprocessableEntity, receiptLimit)
	})
	t.Run("AReplayOfAnExistingCallStillAnswers", func(t *testing.T) {
		rc := decodeReceipt(t, s.post(callOp(ids[1000], "test", "echo", `{"i":1000}`)))
		if rc.Status != "completed" || string(rc.Outcome) != `{"i":1000}` {
			t.Fatalf("replay %s", rc.raw)
		}
		requireStatus(t, s.post(callOp(ids[1000], "test", "echo", `{"i":1}`)), http.StatusConflict, "Call ID already belongs to a different operation")
	})
	t.Run("EveryReceiptIsStillReadable", func(t *testing.T) {
		for _, i := range []int{0, 511, 1023} {
			if rc := decodeReceipt(t, s.get(ids[i], "")); string(rc.Outcome) != fmt.Sprintf(`{"i":%d}`, i) {
				t.Fatalf("receipt %d: %s", i, rc.raw)
			}
		}
	})
	t.Run("DescribesMakeNoReceiptsAndStillWork", func(t *testing.T) {
		s.ok(s.post(describeOp("test", "echo")))
	})
	t.Run("CloseWindowReturnsAllOfThem", func(t *testing.T) {
		if r := s.closeWindow("b1"); len(r) != 1024 {
			t.Fatalf("%d receipts", len(r))
		}
	})
}

// Section 11: a fence refuses new calls and describes in every window from the next request,
// leaves discovery, receipts and replays alone, and a rebind lifts it.
func TestFenceRefusesNewCallsAndDescribesFromTheNextRequest(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	tk := env.Primary.Internals().TestToolkit
	s := open(t, env)
	w2 := s.openWindow("b2")
	running := s.call("test", "gate", gateArgs("fence"))
	<-tk.Started("fence")
	if _, err := env.Runtime.FenceResponse(t.Context(), &responsev1.FenceResponseRequest{ResponseId: s.id}); err != nil {
		t.Fatal(err)
	}

	for _, w := range []struct {
		name string
		opt  option
	}{{"FirstWindow", inWindow(s.windows["b1"])}, {"SecondWindow", inWindow(w2)}} {
		t.Run("CallIn"+w.name+"IsRefused", func(t *testing.T) {
			id := uuid.NewString()
			requireStatus(t, s.post(callOp(id, "test", "echo", `{}`), w.opt), http.StatusConflict, fenced)
			requireUnauthorized(t, s.get(id, ""))
		})
		t.Run("DescribeIn"+w.name+"IsRefused", func(t *testing.T) {
			requireStatus(t, s.post(describeOp("test", "echo"), w.opt), http.StatusConflict, fenced)
		})
	}
	t.Run("DiscoveryAndContextStillWork", func(t *testing.T) {
		s.ok(s.post(`{"operation":"tools.list"}`))
		s.ok(s.post(`{"operation":"tools.search","query":"echo"}`))
		s.ok(s.post(`{"operation":"context.list"}`))
	})
	t.Run("ReceiptsAndReplaysStillAnswer", func(t *testing.T) {
		decodeReceipt(t, s.get(running.CallID, ""))
		decodeReceipt(t, s.post(callOp(running.CallID, "test", "gate", gateArgs("fence"))))
	})
	t.Run("ARunningCallRunsToItsEnd", func(t *testing.T) {
		tk.Release("fence")
		if done := s.await(running.CallID); done.Status != "completed" {
			t.Fatalf("receipt %s", done.raw)
		}
	})
	t.Run("RebindLiftsTheFence", func(t *testing.T) {
		if _, err := env.Runtime.RebindCatalog(t.Context(), &responsev1.RebindCatalogRequest{ResponseId: s.id}); err != nil {
			t.Fatal(err)
		}
		rc := s.call("test", "echo", `{}`)
		s.await(rc.CallID)
		s.ok(s.post(describeOp("test", "echo")))
	})
}

// Section 11: while the catalog is retired, discovery is 422 and calls and describes are 409;
// the grant, windows and receipts survive the rebind.
func TestRetiredCatalogRefusesUntilRebound(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	before := s.call("test", "echo", `{"before":true}`)
	s.await(before.CallID)
	if _, err := env.Runtime.RetireCatalog(t.Context(), &responsev1.RetireCatalogRequest{ResponseId: s.id}); err != nil {
		t.Fatal(err)
	}

	t.Run("ListAndSearchAre422", func(t *testing.T) {
		requireStatus(t, s.post(`{"operation":"tools.list"}`), http.StatusUnprocessableEntity, rebuilding)
		requireStatus(t, s.post(`{"operation":"tools.search","query":"echo"}`), http.StatusUnprocessableEntity, rebuilding)
	})
	t.Run("CallAndDescribeAre409", func(t *testing.T) {
		requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`)), http.StatusConflict, rebuilding)
		requireStatus(t, s.post(describeOp("test", "echo")), http.StatusConflict, rebuilding)
	})
	t.Run("ReceiptsAndReplaysStillAnswer", func(t *testing.T) {
		decodeReceipt(t, s.get(before.CallID, ""))
		decodeReceipt(t, s.post(callOp(before.CallID, "test", "echo", `{"before":true}`)))
	})
	t.Run("AnotherResponseIsUnaffected", func(t *testing.T) {
		other := open(t, env)
		other.ok(other.post(`{"operation":"tools.list"}`))
	})

	if _, err := env.Runtime.RebindCatalog(t.Context(), &responsev1.RebindCatalogRequest{ResponseId: s.id, Toolkits: []string{"test"}}); err != nil {
		t.Fatal(err)
	}
	t.Run("RebindRestoresEverythingWithTheSameGrantAndWindow", func(t *testing.T) {
		p := decodePage(t, s.post(`{"operation":"tools.list"}`))
		for _, raw := range p.Items {
			if it := decodeItem(t, raw); it.Toolkit != "test" {
				t.Fatalf("the rebound selection shows %s", raw)
			}
		}
		s.ok(s.post(`{"operation":"tools.search","query":"echo"}`))
		s.ok(s.post(describeOp("test", "echo")))
		rc := s.call("test", "echo", `{"after":true}`)
		if done := s.await(rc.CallID); done.Parent != "b1" || done.Status != "completed" {
			t.Fatalf("receipt %s", done.raw)
		}
		if got := decodeReceipt(t, s.get(before.CallID, "")); string(got.Outcome) != `{"before":true}` {
			t.Fatalf("receipt from before the rebuild: %s", got.raw)
		}
	})
}
