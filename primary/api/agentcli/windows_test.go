package agentcli_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

const (
	noWindow    = "sent no window"
	windowEnded = "Bash call has ended"
)

// Section 9: calls and describes join only a window that is named, known and not closed;
// discovery and context need none.
func TestCallsAndDescribesNeedAnOpenWindow(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	other := open(t, env)
	s.openWindow("closed")
	s.closeWindow("closed")

	for _, tc := range []struct {
		name   string
		opt    option
		detail string
	}{
		{"NoWindowHeaderIsRefused", withoutWindow(), noWindow},
		{"EmptyWindowHeaderIsRefused", inWindow(""), noWindow},
		{"TwoWindowHeadersAreRefused", func(r *http.Request) { r.Header.Add(windowHeader, s.windows["b1"]) }, noWindow},
		{"UnknownWindowIsRefused", inWindow("not-a-window"), windowEnded},
		{"TheBashCallIDIsNotTheWindow", inWindow("b1"), windowEnded},
		{"AnotherResponsesWindowIsRefused", inWindow(other.windows["b1"]), windowEnded},
		{"ClosedWindowIsRefused", inWindow(s.windows["closed"]), windowEnded},
		{"WindowTokenInOtherCaseIsRefused", inWindow(strings.ToUpper(s.windows["b1"])), windowEnded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`), tc.opt), http.StatusConflict, tc.detail)
			requireStatus(t, s.post(describeOp("test", "echo"), tc.opt), http.StatusConflict, tc.detail)
		})
	}
	t.Run("DiscoveryAndContextNeedNoWindow", func(t *testing.T) {
		for _, op := range []string{`{"operation":"tools.list"}`, `{"operation":"tools.search","query":"echo"}`, `{"operation":"context.list"}`} {
			s.ok(s.post(op, withoutWindow()))
			s.ok(s.post(op, inWindow(s.windows["closed"])))
		}
	})
	t.Run("RefusedCallsLeaveNoReceipt", func(t *testing.T) {
		id := uuid.NewString()
		requireStatus(t, s.post(callOp(id, "test", "echo", `{}`), withoutWindow()), http.StatusConflict, noWindow)
		requireUnauthorized(t, s.get(id, ""))
		rc := decodeReceipt(t, s.post(callOp(id, "test", "echo", `{}`)))
		if rc.Status != "queued" && rc.Status != "completed" { // completed within the fast-call budget
			t.Fatalf("the id is not fresh after a refusal: %s", rc.raw)
		}
	})
}

// Section 9: after a window closes, its receipts stay readable and it refuses new work.
func TestClosedWindowKeepsItsReceiptsReadable(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	rc := s.call("test", "echo", `{"n":1}`)
	s.await(rc.CallID)
	receipts := s.closeWindow("b1")
	if len(receipts) != 1 || receipts[0].GetCallId() != rc.CallID || receipts[0].GetParentBashCallId() != "b1" {
		t.Fatalf("window receipts %v", receipts)
	}
	requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`)), http.StatusConflict, windowEnded)
	requireStatus(t, s.post(describeOp("test", "echo")), http.StatusConflict, windowEnded)
	if got := decodeReceipt(t, s.get(rc.CallID, "?wait=1")); got.Status != "completed" {
		t.Fatalf("receipt %s", got.raw)
	}
}

// Section 9: a draining window admits calls while its admitted work is unsettled, closes once
// it has settled, and CloseWindow returns every receipt it admitted.
func TestDrainingWindowAdmitsUntilItsWorkSettles(t *testing.T) { // not parallel: waitBlocked
	env := startEnv(t)
	s := open(t, env)
	tk := env.Primary.Internals().TestToolkit
	first := s.call("test", "gate", gateArgs("drain-1"))
	<-tk.Started("drain-1")

	type closed struct {
		receipts []*responsev1.Receipt
		err      error
	}
	closing := make(chan closed, 1)
	go func() {
		r, err := s.closeWindowErr("b1")
		closing <- closed{r, err}
	}()
	waitBlocked(t, "(*Response).DrainWindow(")

	second := s.call("test", "gate", gateArgs("drain-2"))
	if second.Parent != "b1" {
		t.Fatalf("admitted while draining into %q", second.Parent)
	}
	s.ok(s.post(describeOp("test", "echo")))
	<-tk.Started("drain-2")

	tk.Release("drain-1")
	s.await(first.CallID)
	select {
	case c := <-closing:
		t.Fatalf("the window closed with admitted work unsettled: %v %v", c.receipts, c.err)
	default:
	}
	third := s.call("test", "echo", `{"late":true}`) // the window still drains: admitted
	s.await(third.CallID)

	tk.Release("drain-2")
	c := <-closing
	if c.err != nil {
		t.Fatal(c.err)
	}
	var ids []string
	for _, r := range c.receipts {
		if r.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED || r.GetParentBashCallId() != "b1" {
			t.Errorf("receipt %v", r)
		}
		ids = append(ids, r.GetCallId())
	}
	if want := []string{first.CallID, second.CallID, third.CallID}; !slices.Equal(ids, want) {
		t.Fatalf("CloseWindow receipts %v, want %v", ids, want)
	}

	t.Run("ACallAfterQuiescenceIsRefused", func(t *testing.T) {
		requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`)), http.StatusConflict, windowEnded)
		requireStatus(t, s.post(describeOp("test", "echo")), http.StatusConflict, windowEnded)
	})
	t.Run("ADrainedWindowWithNothingPendingClosesAtOnce", func(t *testing.T) {
		s.openWindow("idle")
		if r := s.closeWindow("idle"); len(r) != 0 {
			t.Fatalf("receipts %v", r)
		}
		requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`), inWindow(s.windows["idle"])), http.StatusConflict, windowEnded)
	})
}

// Section 9: windows of one response may overlap; each call joins only the window it names.
func TestOverlappingWindowsAttributeCallsToTheWindowNamed(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	w2 := s.openWindow("b2")
	a := s.call("test", "echo", `{"w":"a"}`)
	b := s.call("test", "echo", `{"w":"b"}`, inWindow(w2))
	c := s.call("test", "echo", `{"w":"c"}`)
	if a.Parent != "b1" || b.Parent != "b2" || c.Parent != "b1" {
		t.Fatalf("parents %q %q %q", a.Parent, b.Parent, c.Parent)
	}
	for _, rc := range []receipt{a, b, c} {
		s.await(rc.CallID)
	}
	r2 := s.closeWindow("b2")
	if len(r2) != 1 || r2[0].GetCallId() != b.CallID {
		t.Fatalf("b2 receipts %v", r2)
	}
	requireStatus(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`), inWindow(w2)), http.StatusConflict, windowEnded)
	d := s.call("test", "echo", `{"w":"d"}`) // b1 is still open
	s.await(d.CallID)
	r1 := s.closeWindow("b1")
	var ids []string
	for _, r := range r1 {
		ids = append(ids, r.GetCallId())
	}
	if want := []string{a.CallID, c.CallID, d.CallID}; !slices.Equal(ids, want) {
		t.Fatalf("b1 receipts %v, want %v", ids, want)
	}
	t.Run("AWindowsBashCallIDIsUsedOnce", func(t *testing.T) {
		_, err := env.Runtime.OpenWindow(t.Context(), &responsev1.OpenWindowRequest{ResponseId: s.id, BashCallId: "b1"})
		if err == nil {
			t.Fatal("a second window for b1 was opened")
		}
	})
	t.Run("WindowTokensAreDistinctAndNotTheBashCallID", func(t *testing.T) {
		if s.windows["b1"] == s.windows["b2"] || s.windows["b1"] == "b1" || len(s.windows["b1"]) < 16 {
			t.Fatalf("window tokens %q %q", s.windows["b1"], s.windows["b2"])
		}
	})
}

// Section 9: a nested shell started by a CLI call inherits the calling command's window; its
// own calls join that window, even after the outer command has exited.
func TestNestedShellCallsJoinTheCallingCommandsWindow(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	id := env.Open(t)
	outerID, nestedID := uuid.NewString(), uuid.NewString()
	nested := `curl -sS -H "Authorization: Bearer $MINDROOM_AGENT_CLI_TOKEN" -H "X-MindRoom-Agent-CLI-Window: $MINDROOM_AGENT_CLI_WINDOW" ` +
		`-d '` + callOp(nestedID, "test", "echo", `{"nested":true}`) + `' "$MINDROOM_AGENT_CLI_URL/api/agent-cli/operations"`
	args, _ := json.Marshal(map[string]any{"command": nested})
	outer := `curl -sS -H "Authorization: Bearer $MINDROOM_AGENT_CLI_TOKEN" -H "X-MindRoom-Agent-CLI-Window: $MINDROOM_AGENT_CLI_WINDOW" ` +
		`--data-binary @- "$MINDROOM_AGENT_CLI_URL/api/agent-cli/operations" <<'EOF'` + "\n" +
		callOp(outerID, "shell", "run_shell_command", string(args)) + "\nEOF\n"
	run := env.RunBash(t, id, "outer", outer)
	if run.Result.GetExitCode() != 0 {
		t.Fatalf("exit %d: %s %s", run.Result.GetExitCode(), run.Stdout, run.Stderr)
	}
	got := map[string]*responsev1.Receipt{}
	for _, r := range run.Result.GetReceipts() {
		got[r.GetCallId()] = r
	}
	if len(got) != 2 || got[outerID] == nil || got[nestedID] == nil {
		t.Fatalf("window receipts %v", run.Result.GetReceipts())
	}
	for _, r := range got {
		if r.GetParentBashCallId() != "outer" || r.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Errorf("receipt %v", r)
		}
	}
	if got[nestedID].GetOutcomeJson() != `{"nested":true}` {
		t.Errorf("nested outcome %s", got[nestedID].GetOutcomeJson())
	}
}

// Section 9: an admitted describe whose task is cancelled settles at once with the uniform
// 401, even when the task itself does not stop (a toolkit whose Load ignores cancellation).
func TestDescribeCancelledByCloseIsUnauthorized(t *testing.T) { // not parallel: waitBlocked
	loading := make(chan struct{}, 1)
	release := make(chan struct{})
	slow := &fakeToolkit{name: "slow", description: "Loads until released.", deferred: true,
		load: func(context.Context) error {
			loading <- struct{}{}
			<-release
			return errors.New("released")
		}}
	env := startEnv(t, slow)
	s := open(t, env)
	free := sync.OnceFunc(func() { close(release) })
	t.Cleanup(free) // before the response's own cleanup: Load ignores cancellation
	got := make(chan reply, 1)
	go func() {
		r, _ := s.send(http.MethodPost, operationsPath, strings.NewReader(describeOp("slow", "any")))
		got <- r
	}()
	<-loading
	waitBlocked(t, "(*Response).Describe(")
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_, _ = env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: s.id})
	}()
	r := <-got // while Load still blocks
	free()
	<-closed
	if r.code != http.StatusUnauthorized || string(r.body) != unauthorizedBody {
		t.Fatalf("describe cancelled by close answered %s", r)
	}
}
