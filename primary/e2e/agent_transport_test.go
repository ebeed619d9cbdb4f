package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
)

// TestMindroomAgentTransport puts small HTTP servers between the built mindroom-agent and a
// real primary to check what the client sends, and what it does when the path misbehaves.
func TestMindroomAgentTransport(t *testing.T) {
	// Every call is answered at admission, so each path below sees its POST and its GET.
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Responses.FastCallBudget = -1 }))

	t.Run("FastToolCompletesInOneCallWithOneLongPoll", func(t *testing.T) {
		proxy := startForwarder(t, env, nil)
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1",
			`MINDROOM_AGENT_CLI_URL=`+proxy.URL+` mindroom-agent tools call test.echo '{"fast":true}' --call-id `+agentCallA)
		expectOutput(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr,
			0, receiptLine(agentCallA, "echo", `{"fast":true}`, "bash-1", "completed"), "")
		got := proxy.Requests()
		if len(got) != 2 ||
			got[0].Method != http.MethodPost || got[0].Path != "/api/agent-cli/operations" ||
			got[1].Method != http.MethodGet || got[1].Path != "/api/agent-cli/calls/"+agentCallA || !positiveWait(got[1].RawQuery) {
			t.Errorf("requests = %+v, want the POST and one GET with ?wait=SECONDS", got)
		}
	})

	// Go's own proxy logic never proxies "localhost" or a loopback IP, which would make this
	// test pass whatever the client does. 0.0.0.0 is not a loopback IP but on Linux reaches the
	// primary's 127.0.0.1 listener; curl, which honours http_proxy, shows the variables would
	// divert a client that read them.
	t.Run("ProxyVariablesAreIgnored", func(t *testing.T) {
		bait := startRecorder(t, nil)
		port := env.AgentCLIURL[strings.LastIndex(env.AgentCLIURL, ":"):]
		s := newStepFiles(t)
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1", s.Prelude()+
			`export MINDROOM_AGENT_CLI_URL=http://0.0.0.0`+port+` HTTP_PROXY=`+bait.URL+` http_proxy=`+bait.URL+` HTTPS_PROXY=`+bait.URL+"\n"+
			`step control curl -sS -o /dev/null -w '%{http_code}' "$MINDROOM_AGENT_CLI_URL/api/agent-cli/calls/`+agentCallB+`"`+"\n"+
			`step call mindroom-agent tools call test.echo '{}' --call-id `+agentCallA+"\n")
		if run.Result.GetExitCode() != 0 {
			t.Fatalf("command exit %d, stderr %q", run.Result.GetExitCode(), run.Stderr)
		}
		if control := s.Get(t, "control"); control.stdout != "502" || len(bait.Requests()) != 1 {
			t.Fatalf("curl did not go through the bait proxy (status %q, bait saw %v): the test proves nothing", control.stdout, bait.Requests())
		}
		call := s.Get(t, "call")
		expectOutput(t, call.code, call.stdout, call.stderr, 0, receiptLine(agentCallA, "echo", "{}", "bash-1", "completed"), "")
		if got := bait.Requests(); len(got) != 1 {
			t.Errorf("the proxy saw mindroom-agent's requests: %v", got[1:])
		}
	})

	t.Run("RedirectIsNotFollowedAndTheGrantStaysHome", func(t *testing.T) {
		sink := startRecorder(t, nil)
		redirector := startRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, sink.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		})
		s := newStepFiles(t)
		id := env.Open(t)
		grant := grantOf(t, env, id)
		env.RunBash(t, id, "bash-1", s.Prelude()+
			`export MINDROOM_AGENT_CLI_URL=`+redirector.URL+"\n"+
			`step call mindroom-agent tools call test.echo '{}' --call-id `+agentCallA+"\n"+
			`step get mindroom-agent calls get `+agentCallA+"\n")
		call, get := s.Get(t, "call"), s.Get(t, "get")
		callMsg := expectError(t, call.code, call.stdout, call.stderr, 4, agentCallA)
		getMsg := expectError(t, get.code, get.stdout, get.stderr, 4, agentCallA)
		for _, m := range []struct{ got, want string }{
			{callMsg, "Agent CLI request to " + redirector.URL + "/api/agent-cli/operations failed: HTTP 307 redirect (redirects are not followed); " +
				"the call may have been submitted: retry with --call-id " + agentCallA + ", never a new id"},
			{getMsg, "Agent CLI request to " + redirector.URL + "/api/agent-cli/calls/" + agentCallA + " failed: HTTP 307 redirect (redirects are not followed)"},
		} {
			if m.got != m.want {
				t.Errorf("message:\n got %q\nwant %q", m.got, m.want)
			}
		}
		if got := sink.Requests(); len(got) != 0 {
			t.Errorf("the redirect target saw %+v", got)
		}
		if got := redirector.Requests(); len(got) != 2 {
			t.Errorf("the redirector saw %+v, want the POST and the GET", got)
		}
		expectNoGrant(t, grant, call.stdout, call.stderr, get.stdout, get.stderr)
	})

	t.Run("TransportFailureWhileWaitingPrintsTheLastReceiptAndExitsThree", func(t *testing.T) {
		proxy := startForwarder(t, env, func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodGet {
				return false
			}
			dropConnection(t, w)
			return true
		})
		id := env.Open(t)
		grant := grantOf(t, env, id)
		run := env.RunBash(t, id, "bash-1",
			`MINDROOM_AGENT_CLI_URL=`+proxy.URL+` mindroom-agent tools call test.echo '{}' --call-id `+agentCallA)
		if code := run.Result.GetExitCode(); code != 3 {
			t.Errorf("exit code = %d, want 3 (stderr %q)", code, run.Stderr)
		}
		jsonLine(t, run.Stdout)
		if want := receiptLine(agentCallA, "echo", "null", "bash-1", "queued") + "\n"; run.Stdout != want {
			t.Errorf("stdout:\n got %s want %s", run.Stdout, want)
		}
		prefix := "Agent CLI request to " + proxy.URL + "/api/agent-cli/calls/" + agentCallA + "?wait="
		suffix := "; printed the last receipt, the call may still finish: mindroom-agent calls wait " + agentCallA + "\n"
		if !strings.HasPrefix(run.Stderr, prefix) || !strings.HasSuffix(run.Stderr, suffix) || strings.Count(run.Stderr, "\n") != 1 {
			t.Errorf("stderr = %q, want %q…%q", run.Stderr, prefix, suffix)
		}
		expectNoGrant(t, grant, run.Stdout, run.Stderr)
		rs := run.Result.GetReceipts()
		if len(rs) != 1 || rs[0].GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Errorf("window receipts = %v, want the call completed anyway", rs)
		}
	})
}

// positiveWait reports whether a query is exactly wait=SECONDS with SECONDS > 0.
func positiveWait(rawQuery string) bool {
	v, ok := strings.CutPrefix(rawQuery, "wait=")
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f > 0
}
