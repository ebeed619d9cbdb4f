package mcp

import (
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/internal/canonjson"
)

// permissionArgs is a permission request as Claude Code sends it.
const permissionArgs = `{"tool_name":"Bash","input":{"command":"rm -rf build"},"tool_use_id":"toolu_01"}`

// callPermission sends tools/call of permission_prompt and returns its answer, which must be a
// result, not a JSON-RPC error.
func callPermission(t *testing.T, m *mcpSession) map[string]any {
	t.Helper()
	a := m.request(`7`, "tools/call", `{"name":"permission_prompt","arguments":`+permissionArgs+`}`)
	res, ok := a["result"].(map[string]any)
	if !ok {
		t.Fatalf("permission_prompt answered %v, want a result", a)
	}
	return res
}

// denialOf checks a permission_prompt answer that denies: a normal result (isError false)
// whose one content is the text {"behavior":"deny","message":…}. It returns the message.
func denialOf(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if res["isError"] != false || len(content) != 1 {
		t.Fatalf("result %v, want one content and isError false", res)
	}
	decision, err := canonjson.ParseObject([]byte(textOf(t, res)))
	if err != nil {
		t.Fatalf("result text %q is not JSON: %v", textOf(t, res), err)
	}
	msg, _ := decision["message"].(string)
	if decision["behavior"] != "deny" || msg == "" || len(decision) != 2 {
		t.Fatalf("decision %v, want exactly a behavior deny and a message", decision)
	}
	if !strings.HasPrefix(msg, "Permission was not granted: ") || strings.Contains(msg, testToken) {
		t.Fatalf("denial message %q", msg)
	}
	return msg
}

// TestMCPPermissionPrompt checks that permission_prompt, an engine's permission hook, always
// gets a decision from mindroom-agent mcp: the server's, or a denial saying why there is none.
func TestMCPPermissionPrompt(t *testing.T) {
	t.Run("TheServersDecisionIsPassedOnAsItIs", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-06-18")
		res := callPermission(t, m)
		if res["isError"] != false || textOf(t, res) != `{"behavior":"allow","updatedInput":{"command":"rm -rf build"}}` {
			t.Fatalf("result %v", res)
		}
	})

	for _, tc := range []struct {
		name string
		fake func(f *fakeAgentCLI)
		want string
	}{
		{"FencedCallIsADenial", func(f *fakeAgentCLI) {
			f.rejectCalls = &fakeRejection{409, "Call cancelled before dispatch: the response is fenced"}
		}, "the request for permission was refused (Agent CLI request was rejected: Call cancelled before dispatch: the response is fenced)"},
		{"CallAfterTheBashCommandEndedIsADenial", func(f *fakeAgentCLI) { f.windowClosed = true },
			"refused (Agent CLI request was rejected: Bash call has ended)"},
		{"CallOverTheLimitsIsADenial", func(f *fakeAgentCLI) {
			f.rejectCalls = &fakeRejection{422, "At most 64 CLI operations may run at once"}
		}, "refused (Agent CLI request was rejected: At most 64 CLI operations may run at once)"},
		{"CallRejectedAsTooLargeIsADenial", func(f *fakeAgentCLI) {
			f.rejectCalls = &fakeRejection{413, "Agent CLI request exceeds 64 KiB"}
		}, "refused (Agent CLI request was rejected: Agent CLI request exceeds 64 KiB)"},
		{"BadRequestIsADenial", func(f *fakeAgentCLI) { f.rejectCalls = &fakeRejection{400, "bad request"} },
			"refused (Agent CLI request was rejected: bad request)"},
		{"RevokedGrantIsADenialNotAnAuthorityError", func(f *fakeAgentCLI) { f.revoked = true },
			"refused (Agent CLI authority is unavailable"},
		{"CallCancelledBeforeDispatchIsADenial", func(f *fakeAgentCLI) { f.permission = permissionCancelled },
			"the request was cancelled before anyone decided (Call cancelled before dispatch: the response is fenced)"},
		{"CallInterruptedAfterDispatchIsADenial", func(f *fakeAgentCLI) { f.permission = permissionInterrupted },
			"the request failed (Call interrupted after dispatch; effects may have occurred)"},
		{"AnswerThatIsNoDecisionIsADenial", func(f *fakeAgentCLI) { f.permission = permissionNoDecision },
			"the answer to the request was not a decision"},
		{"TransportFailureWhileWaitingIsADenial", func(f *fakeAgentCLI) { f.permission, f.failGets = permissionWaits, true },
			"failed: HTTP 500: internal error)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAgentCLI(t)
			f.set(tc.fake)
			m := startMCP(t, f.env(), 0)
			if msg := denialOf(t, callPermission(t, m)); !strings.Contains(msg, tc.want) {
				t.Fatalf("denial %q does not say %q", msg, tc.want)
			}
		})
	}

	t.Run("MissingEnvironmentIsADenial", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		if msg := denialOf(t, callPermission(t, m)); !strings.Contains(msg, "nobody could be asked (") {
			t.Fatalf("denial %q", msg)
		}
	})

	t.Run("UnreachableAgentCLIIsADenial", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		env := f.env()
		f.srv.srv.Close()
		m := startMCP(t, env, 0)
		res := callPermission(t, m)
		if msg := denialOf(t, res); !strings.Contains(msg, "the request for permission could not be sent (") {
			t.Fatalf("denial %q", msg)
		}
		callIDOf(t, res)
	})

	t.Run("WaitThatTimesOutIsADenial", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.permission = permissionHangs })
		// The fake never answers the wait: the client gives up after its request timeout.
		m := startMCPWith(t, f.env(), 0, func(c *client.AgentConfig) { c.RequestTimeout = 50 * time.Millisecond })
		res := callPermission(t, m)
		msg := denialOf(t, res)
		if !strings.Contains(msg, "waiting for the decision failed (") || !strings.Contains(msg, "timed out") {
			t.Fatalf("denial %q", msg)
		}
		if id := callIDOf(t, res); id != <-f.submitted {
			t.Fatalf("denial names call %s", id)
		}
	})

	t.Run("StoppingWhileACallWaitsAnswersItWithADenial", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.permission = permissionWaits })
		m := startMCP(t, f.env(), 0)
		m.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"permission_prompt","arguments":` + permissionArgs + `}}`)
		id := <-f.submitted
		m.stop()
		res, _ := m.answer(`7`)["result"].(map[string]any)
		if msg := denialOf(t, res); msg != stoppedReason {
			t.Fatalf("denial %q, want %q", msg, stoppedReason)
		}
		if callIDOf(t, res) != id {
			t.Fatalf("result %v does not name call %s", res, id)
		}
		if code := m.exitCode(); code != client.ExitCompleted {
			t.Fatalf("exit code %d", code)
		}
	})

	t.Run("StoppingLeavesOtherWaitingCallsUnanswered", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test__slow"}}`)
		<-f.submitted
		m.stop()
		m.exitCode()
		if rest := m.rest(); len(rest) != 0 {
			t.Fatalf("stdout %v, want no answer", rest)
		}
	})

	t.Run("RequestTheClientCancelledIsStillNeverAnswered", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.permission = permissionWaits })
		m := startMCP(t, f.env(), 0)
		m.send(`{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"permission_prompt","arguments":` + permissionArgs + `}}`)
		<-f.submitted
		m.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"p","reason":"user"}}`)
		if code := m.exitCode(); code != client.ExitCompleted {
			t.Fatalf("exit code %d", code)
		}
		if rest := m.rest(); len(rest) != 0 {
			t.Fatalf("stdout %v, want no answer to the cancelled request", rest)
		}
	})
}
