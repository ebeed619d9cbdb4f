package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/toolkits/testtk"
)

// liveCall admits test.<function> with args through the window whose shell environment is
// env, as the Agent CLI would, and returns the call's id.
func liveCall(t *testing.T, r *response.Response, env map[string]string, function, args string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	req := response.CallRequest{ID: id, Toolkit: testtk.Name, Function: function, Arguments: []byte(args)}
	if _, err := r.Call(t.Context(), env["MINDROOM_AGENT_CLI_WINDOW"], req); err != nil {
		t.Fatalf("Call %s: %v", function, err)
	}
	return id
}

// openWindow opens a window for bashCallID and returns its shell environment, which holds
// the response's grant and the window's token.
func openWindow(t *testing.T, r *response.Response, bashCallID string) (*response.Window, map[string]string) {
	t.Helper()
	w, err := r.OpenWindow(bashCallID)
	if err != nil {
		t.Fatal(err)
	}
	env, err := r.AgentCLIEnv(w)
	if err != nil {
		t.Fatal(err)
	}
	return w, env
}

func settle(t *testing.T, r *response.Response, id uuid.UUID) {
	t.Helper()
	if _, err := r.GetCall(context.Background(), id, time.Minute); err != nil {
		t.Fatal(err)
	}
}

func findResponse(t *testing.T, list []*operatorv1.LiveResponse, id string) *operatorv1.LiveResponse {
	t.Helper()
	for _, r := range list {
		if r.GetId() == id {
			return r
		}
	}
	t.Fatalf("response %s is not listed", id)
	return nil
}

func TestResponsesAPI(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)
	r, err := e.responses.Open(response.Spec{
		Agent: "code", Requester: "@sam:example.org", Channel: "!room", Thread: "$t1", ShellMode: "minimal", WorkerKey: "key-a",
		Origin: response.OriginScheduled, Flags: []string{response.FlagProgressReport, response.FlagRequesterTrusted},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Binding().Bind("worker-3")
	done, doneEnv := openWindow(t, r, "bash-1")
	large := liveCall(t, r, doneEnv, "large", `{"bytes":5000}`)
	settle(t, r, large)
	r.DrainWindow(done)
	_, liveEnv := openWindow(t, r, "bash-2")
	echo := liveCall(t, r, liveEnv, "echo", `{"a":1}`)
	settle(t, r, echo)
	gate := liveCall(t, r, liveEnv, "gate", `{"name":"responses"}`)
	<-e.testtk.Started("responses")
	defer e.testtk.Release("responses")

	closed, err := e.responses.Open(response.Spec{Agent: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()

	t.Run("ShowsWhomItAnswersWhereItRunsItsWindowsAndReceipts", func(t *testing.T) {
		got, err := e.member.ListResponses(ctx, &operatorv1.ListResponsesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.GetResponses()) != 1 {
			t.Fatalf("ListResponses = %v; want the live response only", got)
		}
		l := findResponse(t, got.GetResponses(), r.ID())
		if l.GetAgent() != "code" || l.GetRequester() != "@sam:example.org" || l.GetConversation().GetChannel() != "!room" ||
			l.GetConversation().GetThread() != "$t1" || l.GetOrigin() != operatorv1.ResponseOrigin_RESPONSE_ORIGIN_SCHEDULED ||
			strings.Join(l.GetFlags(), ",") != "progress_report,requester_trusted" || l.GetShellMode() != operatorv1.ShellMode_SHELL_MODE_MINIMAL ||
			l.GetLocation().GetWorkerKey() != "key-a" || l.GetLocation().GetWorkerId() != "worker-3" ||
			!l.GetGrantExpiresAt().AsTime().Equal(r.GrantExpires()) || l.GetFenced() || l.GetUnsettled() != 1 || l.GetReceiptCount() != 3 {
			t.Fatalf("response = %v", l)
		}
		w := l.GetWindows()
		if len(w) != 2 || w[0].GetBashCallId() != "bash-2" || w[0].GetState() != operatorv1.WindowState_WINDOW_STATE_OPEN ||
			w[0].GetAdmitted() != 2 || w[0].GetUnsettled() != 1 || w[1].GetBashCallId() != "bash-1" ||
			w[1].GetState() != operatorv1.WindowState_WINDOW_STATE_CLOSED || w[1].GetAdmitted() != 1 || w[1].GetUnsettled() != 0 {
			t.Fatalf("windows = %v", w)
		}
		rc := l.GetReceipts()
		if len(rc) != 3 || rc[0].GetCallId() != gate.String() || rc[1].GetCallId() != echo.String() || rc[2].GetCallId() != large.String() {
			t.Fatalf("receipts = %v; want gate, echo, large", rc)
		}
		if rc[0].GetStatus() != operatorv1.CallStatus_CALL_STATUS_RUNNING || rc[0].GetOutcomeJson() != "null" || rc[0].GetParentBashCallId() != "bash-2" {
			t.Fatalf("running receipt = %v", rc[0])
		}
		if rc[1].GetStatus() != operatorv1.CallStatus_CALL_STATUS_COMPLETED || rc[1].GetToolkit() != testtk.Name || rc[1].GetFunction() != "echo" ||
			rc[1].GetOutcomeJson() != `{"a":1}` || rc[1].GetOutcomeShortened() {
			t.Fatalf("echo receipt = %v", rc[1])
		}
		var shortened string
		if err := json.Unmarshal([]byte(rc[2].GetOutcomeJson()), &shortened); err != nil || !rc[2].GetOutcomeShortened() ||
			len(rc[2].GetOutcomeJson()) > 2048 || !strings.HasPrefix(shortened, `"xxx`) ||
			!strings.Contains(shortened, "[outcome shortened: 5002 bytes, first") || rc[2].GetParentBashCallId() != "bash-1" {
			t.Fatalf("large receipt (%d bytes) = %v (%v)", len(rc[2].GetOutcomeJson()), rc[2], err)
		}
	})

	t.Run("NeverShowsTheGrantOrAWindowToken", func(t *testing.T) {
		grant, window := liveEnv["MINDROOM_AGENT_CLI_TOKEN"], liveEnv["MINDROOM_AGENT_CLI_WINDOW"]
		if grant == "" || window == "" || doneEnv["MINDROOM_AGENT_CLI_TOKEN"] != grant {
			t.Fatalf("shell environment %v holds no grant", liveEnv)
		}
		res := e.do(t, http.MethodGet, "/v1/operator/responses", e.memberToken, "")
		if res.code != http.StatusOK || !strings.Contains(string(res.body), r.ID()) {
			t.Fatalf("GET responses = %d %s", res.code, res.body)
		}
		for name, secret := range map[string]string{"grant": grant, "window token": window, "closed window token": doneEnv["MINDROOM_AGENT_CLI_WINDOW"]} {
			if strings.Contains(string(res.body), secret) {
				t.Fatalf("the REST answer holds the %s", name)
			}
		}
		var body struct {
			Responses []struct {
				ID             string `json:"id"`
				GrantExpiresAt string `json:"grant_expires_at"`
				Receipts       []struct {
					CallID string `json:"call_id"`
					Status string `json:"status"`
				} `json:"receipts"`
			} `json:"responses"`
		}
		if err := json.Unmarshal(res.body, &body); err != nil || len(body.Responses) != 1 || body.Responses[0].GrantExpiresAt == "" ||
			len(body.Responses[0].Receipts) != 3 || body.Responses[0].Receipts[0].Status != "CALL_STATUS_RUNNING" {
			t.Fatalf("GET responses body %s (%v)", res.body, err)
		}
	})

	t.Run("AtMostTwentyReceiptsTheLatestFirst", func(t *testing.T) {
		busy, err := e.responses.Open(response.Spec{Agent: "busy"})
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		_, env := openWindow(t, busy, "bash-1")
		var ids []uuid.UUID
		for i := range 25 {
			id := liveCall(t, busy, env, "echo", fmt.Sprintf(`{"i":%d}`, i))
			settle(t, busy, id)
			ids = append(ids, id)
		}
		got, err := e.member.ListResponses(ctx, &operatorv1.ListResponsesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		l := findResponse(t, got.GetResponses(), busy.ID())
		if l.GetReceiptCount() != 25 || len(l.GetReceipts()) != 20 || l.GetReceipts()[0].GetCallId() != ids[24].String() ||
			l.GetReceipts()[19].GetCallId() != ids[5].String() || l.GetWindows()[0].GetAdmitted() != 25 {
			t.Fatalf("busy response: %d receipts of %d, first %s", len(l.GetReceipts()), l.GetReceiptCount(), l.GetReceipts()[0].GetCallId())
		}
	})
}
