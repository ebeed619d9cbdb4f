package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// operatorREST calls the operator REST API with the first admin's credential and decodes the
// JSON answer.
func operatorREST(t *testing.T, env *testenv.Env, method, path, body string) (int, map[string]any) {
	t.Helper()
	token, err := os.ReadFile(filepath.Join(env.StateDir, "credentials", "operator-admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, env.HTTPURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// TestRequestApprovalDecidedOverREST: from real Bash, request_approval with --timeout 0 exits 3
// while the call waits; an operator decides over REST; `calls wait` exits 0 with the decision.
func TestRequestApprovalDecidedOverREST(t *testing.T) {
	env := testenv.Start(t)
	id := env.Open(t)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"Approve", `{"decision":"DECISION_APPROVE"}`, `{"approved":true,"feedback":"","decided_by":"admin"}`},
		{"Deny", `{"decision":"DECISION_DENY","text":"not today"}`, `{"approved":false,"feedback":"not today","decided_by":"admin"}`},
		{"Comment", `{"decision":"DECISION_COMMENT","text":"add a rollback plan"}`, `{"approved":false,"feedback":"add a rollback plan","decided_by":"admin"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			callID := uuid.NewString()
			done := make(chan testenv.BashRun, 1)
			go func() {
				done <- env.RunBash(t, id, "approval-"+tc.name, fmt.Sprintf(`mindroom-agent tools call --timeout 0 --call-id %s interaction.request_approval '{"details":"ship %s"}'; echo "submit=$?"
mindroom-agent calls wait %s; echo "wait=$?"`, callID, tc.name, callID))
			}()
			promptID := ""
			for deadline := time.Now().Add(20 * time.Second); promptID == ""; {
				code, list := operatorREST(t, env, http.MethodGet, "/v1/operator/prompts?status=PROMPT_STATUS_PENDING", "")
				if code != http.StatusOK {
					t.Fatalf("list prompts: %d %v", code, list)
				}
				prompts, _ := list["prompts"].([]any)
				for _, p := range prompts {
					if m, _ := p.(map[string]any); m["call_id"] == callID {
						promptID = fmt.Sprint(m["id"])
					}
				}
				if promptID == "" && time.Now().After(deadline) {
					t.Fatal("the approval never reached the operators")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if code, out := operatorREST(t, env, http.MethodPost, "/v1/operator/prompts/"+promptID+":decide", tc.body); code != http.StatusOK {
				t.Fatalf("decide: %d %v", code, out)
			}
			if code, _ := operatorREST(t, env, http.MethodPost, "/v1/operator/prompts/"+promptID+":decide", tc.body); code != http.StatusConflict {
				t.Errorf("deciding again: %d, want 409", code)
			}
			var run testenv.BashRun
			select {
			case run = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the command did not end after the decision")
			}
			lines := strings.Split(strings.TrimSpace(run.Stdout), "\n")
			if len(lines) < 3 || lines[len(lines)-1] != "wait=0" || !strings.Contains(run.Stdout, "submit=3\n") {
				t.Fatalf("stdout %q stderr %q: want submit=3 then wait=0", run.Stdout, run.Stderr)
			}
			// The receipt's outcome is the JSON text the contract fixes.
			var receipt struct {
				Status  string `json:"status"`
				Outcome string `json:"outcome"`
			}
			var got, want any
			_ = json.Unmarshal([]byte(tc.want), &want)
			if err := json.Unmarshal([]byte(lines[len(lines)-2]), &receipt); err != nil || receipt.Status != "completed" ||
				json.Unmarshal([]byte(receipt.Outcome), &got) != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("calls wait printed %q, want a completed receipt with outcome %s", lines[len(lines)-2], tc.want)
			}
		})
	}
}

// TestPermissionAllowancesAreListedAndRevokedOverREST: an admin sees a conversation's allowance
// and revokes it; a second revoke is 404.
func TestPermissionAllowancesAreListedAndRevokedOverREST(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	env.Open(t) // the primary serves: its boot recovery (which expires pending prompts) is done
	p, err := env.Primary.Internals().Store.CreatePrompt(ctx, store.NewPrompt{Kind: store.PromptPermission, Channel: "!room", Thread: "$t",
		Requester: "@alice", Agent: "tester", ResponseID: "r", CallID: "c", ToolName: "Bash",
		MaskedInput: json.RawMessage(`{}`), Deadline: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Primary.Internals().Store.DecidePrompt(ctx, p.ID, "admin", store.DecisionAllowConversation, ""); err != nil {
		t.Fatal(err)
	}
	code, list := operatorREST(t, env, http.MethodGet, "/v1/operator/permissionAllowances?conversation.channel=!room&conversation.thread=$t", "")
	items, _ := list["allowances"].([]any)
	if code != http.StatusOK || len(items) != 1 || items[0].(map[string]any)["tool_name"] != "Bash" {
		t.Fatalf("list: %d %v", code, list)
	}
	revoke := `{"conversation":{"channel":"!room","thread":"$t"},"tool_name":"Bash","scope":"PERMISSION_SCOPE_CONVERSATION"}`
	if code, out := operatorREST(t, env, http.MethodPost, "/v1/operator/permissionAllowances:revoke", revoke); code != http.StatusOK {
		t.Fatalf("revoke: %d %v", code, out)
	}
	if code, _ := operatorREST(t, env, http.MethodPost, "/v1/operator/permissionAllowances:revoke", revoke); code != http.StatusNotFound {
		t.Errorf("second revoke: %d, want 404", code)
	}
	if _, allowed, err := env.Primary.Internals().Store.UsePermissionAllowance(ctx, store.PermissionUse{Channel: "!room", Thread: "$t", ToolName: "Bash"}); err != nil || allowed {
		t.Errorf("after revoke: allowed %v, %v", allowed, err)
	}
}
