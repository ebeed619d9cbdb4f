package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// TestMindroomAgentExitCodes runs the built mindroom-agent inside real Bash commands of a real
// primary and checks every exit code of contract section 12 with the exact line it prints.
func TestMindroomAgentExitCodes(t *testing.T) {
	env := testenv.Start(t)

	t.Run("CompletedCallExitsZeroAndPrintsItsReceipt", func(t *testing.T) {
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1", `mindroom-agent tools call test.echo '{"a":1}' --call-id `+agentCallA)
		expectOutput(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr,
			0, receiptLine(agentCallA, "echo", `{"a":1}`, "bash-1", "completed"), "")
		if rs := run.Result.GetReceipts(); len(rs) != 1 || rs[0].GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Errorf("window receipts = %v", rs)
		}
	})

	t.Run("FailedCallExitsOneAndPrintsItsReceipt", func(t *testing.T) {
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1", `mindroom-agent tools call test.fail '{"message":"boom"}' --call-id `+agentCallA)
		expectOutput(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr,
			1, receiptLine(agentCallA, "fail", `"boom"`, "bash-1", "failed"), "")
	})

	// The primary has no deterministic way to leave a cancelled receipt a client can read: a
	// call is cancelled at dispatch only if a fence lands between its admission and its
	// dispatch goroutine taking the response lock (a race), and every other cancellation
	// closes the response, which drops its receipts (then GET is 401, exit 4). So the real
	// binary, in a real Bash command, talks to a server that answers with a receipt in the
	// primary's exact shape ending cancelled.
	t.Run("CancelledReceiptExitsOne", func(t *testing.T) {
		queued := receiptLine(agentCallA, "echo", "null", "bash-1", "queued")
		cancelled := receiptLine(agentCallA, "echo", `"Call cancelled before dispatch: the response is fenced"`, "bash-1", "cancelled")
		stub := startRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch {
			case r.Method == http.MethodPost && r.URL.Path == "/api/agent-cli/operations":
				io.WriteString(w, queued)
			case r.Method == http.MethodGet && r.URL.Path == "/api/agent-cli/calls/"+agentCallA:
				io.WriteString(w, cancelled)
			default:
				http.Error(w, `{"detail":"unexpected request"}`, http.StatusNotFound)
			}
		})
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1",
			`MINDROOM_AGENT_CLI_URL=`+stub.URL+` mindroom-agent tools call test.echo '{}' --call-id `+agentCallA)
		expectOutput(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr, 1, cancelled, "")
		if got := stub.Requests(); len(got) != 2 {
			t.Errorf("stub saw %v, want the POST and one GET", got)
		}
	})

	t.Run("PendingCallExitsThreeAndCallsWaitExitsZeroOnceItCompletes", func(t *testing.T) {
		const gate = "pending-then-wait"
		waiting := make(chan struct{}) // closed when calls wait sends its first long poll
		var once sync.Once
		proxy := startForwarder(t, env, func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet && r.URL.Query().Has("wait") {
				once.Do(func() { close(waiting) })
			}
			return false
		})
		released := releaseWhen(env, gate, waiting)
		s := newStepFiles(t)
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1", s.Prelude()+
			`step submit mindroom-agent tools call test.gate '{"name":"`+gate+`"}' --timeout 0 --call-id `+agentCallA+"\n"+
			`step wait env MINDROOM_AGENT_CLI_URL=`+proxy.URL+` mindroom-agent calls wait `+agentCallA+"\n")
		if !<-released {
			t.Fatal("calls wait never long-polled while the gate call ran")
		}
		if run.Result.GetExitCode() != 0 {
			t.Fatalf("command exit %d, stderr %q", run.Result.GetExitCode(), run.Stderr)
		}
		submit, wait := s.Get(t, "submit"), s.Get(t, "wait")
		expectOutput(t, submit.code, submit.stdout, submit.stderr, 3, receiptLine(agentCallA, "gate", "null", "bash-1", "queued"), "")
		expectOutput(t, wait.code, wait.stdout, wait.stderr, 0, receiptLine(agentCallA, "gate", `{"released":"`+gate+`"}`, "bash-1", "completed"), "")
	})

	t.Run("CallNamingAnUnknownWindowIsRejectedWith409AndExitsTwo", func(t *testing.T) {
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1",
			`MINDROOM_AGENT_CLI_WINDOW=bogus mindroom-agent tools call test.echo '{}' --call-id `+agentCallA)
		msg := expectError(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr, 2, agentCallA)
		if want := "Agent CLI request was rejected: Bash call has ended; its window accepts no new calls"; msg != want {
			t.Errorf("message = %q, want %q", msg, want)
		}
		if rs := run.Result.GetReceipts(); len(rs) != 0 {
			t.Errorf("window receipts = %v, want none", rs)
		}
	})

	t.Run("CallInAFencedResponseIsRejectedWith409AndExitsTwo", func(t *testing.T) {
		id := env.Open(t)
		if _, err := env.Runtime.FenceResponse(context.Background(), &responsev1.FenceResponseRequest{ResponseId: id}); err != nil {
			t.Fatalf("FenceResponse: %v", err)
		}
		run := env.RunBash(t, id, "bash-1", `mindroom-agent tools call test.echo '{}' --call-id `+agentCallA)
		msg := expectError(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr, 2, agentCallA)
		if want := "Agent CLI request was rejected: Call cancelled before dispatch: the response is fenced"; msg != want {
			t.Errorf("message = %q, want %q", msg, want)
		}
	})

	// The client bounds the input object at 64 KiB like the server bounds the body; the body
	// wraps the input in ~130 more bytes, so an input just under the bound makes a body over it.
	t.Run("BodyOverSixtyFourKiBIsRejectedWith413AndExitsTwo", func(t *testing.T) {
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1", jsonFile("in.json", 65528)+
			`mindroom-agent tools call test.echo --json-file in.json --call-id `+agentCallA)
		msg := expectError(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr, 2, agentCallA)
		if want := "Agent CLI request was rejected: Agent CLI request exceeds 64 KiB"; msg != want {
			t.Errorf("message = %q, want %q", msg, want)
		}
	})

	t.Run("InputOverSixtyFourKiBExitsTwoWithoutARequest", func(t *testing.T) {
		proxy := startForwarder(t, env, nil)
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1", jsonFile("in.json", 65537)+
			`MINDROOM_AGENT_CLI_URL=`+proxy.URL+` mindroom-agent tools call test.echo --json-file in.json --call-id `+agentCallA)
		msg := expectError(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr, 2, agentCallA)
		if want := "call input exceeds 64 KiB"; msg != want {
			t.Errorf("message = %q, want %q", msg, want)
		}
		if got := proxy.Requests(); len(got) != 0 {
			t.Errorf("requests sent: %v", got)
		}
	})

	t.Run("DescribeOfAnUnknownFunctionIsRejectedWith422AndExitsTwo", func(t *testing.T) {
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1", `mindroom-agent tools describe test.nope`)
		msg := expectError(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr, 2, "")
		if want := `Agent CLI request was rejected: Unknown function "nope" in toolkit "test"; its functions: `; !strings.HasPrefix(msg, want) || !strings.Contains(msg, " echo, ") {
			t.Errorf("message = %q, want it to start with %q and name echo", msg, want)
		}
	})

	t.Run("MissingTokenExitsFour", func(t *testing.T) {
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1", `env -u MINDROOM_AGENT_CLI_TOKEN mindroom-agent tools list`)
		msg := expectError(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr, 4, "")
		if want := "Agent CLI authority is unavailable: MINDROOM_AGENT_CLI_TOKEN is not set; run mindroom-agent inside an agent's shell"; msg != want {
			t.Errorf("message = %q, want %q", msg, want)
		}
	})

	t.Run("GrantOfAClosedResponseExitsFour", func(t *testing.T) {
		s := newStepFiles(t)
		first := env.Open(t)
		if run := env.RunBash(t, first, "bash-1", `printf %s "$MINDROOM_AGENT_CLI_TOKEN" >`+bashQuote(s.Path("grant"))); run.Result.GetExitCode() != 0 {
			t.Fatalf("saving the grant: exit %d, stderr %q", run.Result.GetExitCode(), run.Stderr)
		}
		grant := grantOf(t, env, first)
		if _, err := env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: first}); err != nil {
			t.Fatalf("CloseResponse: %v", err)
		}
		second := env.Open(t)
		run := env.RunBash(t, second, "bash-1", s.Prelude()+
			`old=$(cat "$STEPS/grant")`+"\n"+
			`step list env MINDROOM_AGENT_CLI_TOKEN="$old" mindroom-agent tools list`+"\n"+
			`step call env MINDROOM_AGENT_CLI_TOKEN="$old" mindroom-agent tools call test.echo '{}' --call-id `+agentCallA+"\n")
		list, call := s.Get(t, "list"), s.Get(t, "call")
		listMsg := expectError(t, list.code, list.stdout, list.stderr, 4, "")
		callMsg := expectError(t, call.code, call.stdout, call.stderr, 4, agentCallA)
		for _, m := range []struct{ got, want string }{
			{listMsg, "Agent CLI authority is unavailable (HTTP 401 from " + env.AgentCLIURL + "/api/agent-cli/operations)"},
			{callMsg, "Agent CLI authority is unavailable (HTTP 401 from " + env.AgentCLIURL + "/api/agent-cli/operations)"},
		} {
			if m.got != m.want {
				t.Errorf("message = %q, want %q", m.got, m.want)
			}
		}
		expectNoGrant(t, grant, list.stdout, list.stderr, call.stdout, call.stderr)
		if rs := run.Result.GetReceipts(); len(rs) != 0 {
			t.Errorf("window receipts = %v, want none", rs)
		}
	})

	t.Run("UnreachableURLExitsFourNamingTheURLButNotTheGrant", func(t *testing.T) {
		id := env.Open(t)
		grant := grantOf(t, env, id)
		run := env.RunBash(t, id, "bash-1",
			`MINDROOM_AGENT_CLI_URL=http://127.0.0.1:1 mindroom-agent tools call test.echo '{}' --call-id `+agentCallA)
		msg := expectError(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr, 4, agentCallA)
		if want := "Agent CLI request to http://127.0.0.1:1/api/agent-cli/operations failed: "; !strings.HasPrefix(msg, want) {
			t.Errorf("message = %q, want it to start with %q", msg, want)
		}
		if want := "retry with --call-id " + agentCallA; !strings.Contains(msg, want) {
			t.Errorf("message = %q, want it to say %q", msg, want)
		}
		expectNoGrant(t, grant, run.Stdout, run.Stderr)
	})
}

// jsonFile is a Bash line writing name: a JSON object {"x":"xxx…"} of exactly size bytes.
func jsonFile(name string, size int) string {
	return fmt.Sprintf(`{ printf '{"x":"'; head -c %d /dev/zero | tr '\0' x; printf '"}'; } >%s`+"\n", size-8, bashQuote(name))
}

// releaseWhen releases the test.gate call named gate once it has started and ready is closed,
// and reports true. If that does not happen within 10 s it releases the gate anyway (so the
// Bash command's window can drain and the test can end) and reports false.
func releaseWhen(env *testenv.Env, gate string, ready <-chan struct{}) <-chan bool {
	released := make(chan bool, 1)
	tk := env.Primary.Internals().TestToolkit
	go func() {
		watchdog := time.NewTimer(10 * time.Second)
		defer watchdog.Stop()
		ok := true
		for _, c := range []<-chan struct{}{tk.Started(gate), ready} {
			select {
			case <-c:
			case <-watchdog.C:
				ok = false
			}
			if !ok {
				break
			}
		}
		tk.Release(gate)
		released <- ok
	}()
	return released
}
