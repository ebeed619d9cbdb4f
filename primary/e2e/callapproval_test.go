package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// callApprovals lists the call approvals in state st.
func (r *restartRig) callApprovals(t *testing.T, st operatorv1.CallApprovalStatus) []*operatorv1.CallApproval {
	t.Helper()
	ctx, cancel := bearerCtx(r.admin)
	defer cancel()
	resp, err := r.operator.ListCallApprovals(ctx, &operatorv1.ListCallApprovalsRequest{Status: st})
	if err != nil {
		t.Fatalf("ListCallApprovals: %v", err)
	}
	return resp.GetCallApprovals()
}

// awaitCallApproval polls until exactly one call approval is in state st and returns it.
func (r *restartRig) awaitCallApproval(t *testing.T, st operatorv1.CallApprovalStatus) *operatorv1.CallApproval {
	t.Helper()
	deadline := time.Now().Add(mpDeadline)
	for {
		if list := r.callApprovals(t, st); len(list) == 1 {
			return list[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no call approval %v within %v", st, mpDeadline)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// agentCLIStatus sends one Agent CLI request with token and returns its status and body.
func agentCLIStatus(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestConfirmedCallSurvivesSIGKILLOfThePrimary kills the real primary while a Bash command's
// call of a function that needs confirmation waits, and starts a new primary on the same state:
// the old grant is 401, an operator approves, the exact saved call runs once on its own and a
// continuation reports it with the command's checkpoint, and the Bash command never runs again.
func TestConfirmedCallSurvivesSIGKILLOfThePrimary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	bin := mpBuild(t)
	state, work := shellTempDir(t), shellprivtest.BinaryDir(t)
	grpcAddr := freeLoopbackAddr(t)
	first, _ := startRestartPrimary(t, "mindroom-primary (first)", bin, state, grpcAddr, "--enable-test-toolkit")

	outerMarker, callMarker := filepath.Join(work, "outer.runs"), filepath.Join(work, "call.runs")
	tokenFile := filepath.Join(work, "grant")
	callID := uuid.NewString()
	checkpoint := []byte("runtime checkpoint \x00\x01\xff")
	args, _ := json.Marshal(map[string]any{"marker": callMarker, "x": 1})
	command := `printf %s "$MINDROOM_AGENT_CLI_TOKEN" > ` + bashQuote(tokenFile) + `; echo run >> ` + bashQuote(outerMarker) +
		`; mindroom-agent tools call --timeout 0 --call-id ` + callID + ` test.confirm_echo ` + bashQuote(string(args))

	ctx, cancel := bearerCtx(first.runtime)
	defer cancel()
	opened, err := first.api.OpenResponse(ctx, &responsev1.OpenResponseRequest{
		AgentName: "tester", RequesterId: "@sam:example.org", ShellMode: responsev1.ShellMode_SHELL_MODE_MINIMAL,
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$confirm"},
	})
	if err != nil {
		t.Fatalf("OpenResponse: %v", err)
	}
	// The command's window drains only when the call settles, so RunBash blocks until the kill.
	stream, err := first.api.RunBash(ctx, &responsev1.RunBashRequest{
		ResponseId: opened.GetResponseId(), BashCallId: "bash-outer", Command: command, Checkpoint: checkpoint,
	})
	if err != nil {
		t.Fatalf("RunBash: %v", err)
	}
	ran := make(chan error, 1)
	go func() {
		for {
			if _, err := stream.Recv(); err != nil {
				ran <- err
				return
			}
		}
	}()

	waiting := first.awaitCallApproval(t, operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_WAITING)
	if waiting.GetCallId() != callID || waiting.GetToolkit() != "test" || waiting.GetFunction() != "confirm_echo" ||
		waiting.GetBashCallId() != "bash-outer" || waiting.GetResponseId() != opened.GetResponseId() {
		t.Fatalf("waiting call approval %v", waiting)
	}
	var saved map[string]any
	if err := json.Unmarshal([]byte(waiting.GetArgumentsJson()), &saved); err != nil || saved["marker"] != callMarker || saved["x"] != float64(1) {
		t.Fatalf("saved arguments %q", waiting.GetArgumentsJson())
	}
	grant, err := os.ReadFile(tokenFile)
	if err != nil || len(grant) == 0 {
		t.Fatalf("the command's grant: %q, %v", grant, err)
	}
	if n := lines(t, callMarker); n != 0 {
		t.Fatalf("the call ran %d times before it was approved", n)
	}

	if code := first.proc.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("primary exit code %d after SIGKILL", code)
	}
	select {
	case err := <-ran:
		if status.Code(err) == codes.OK {
			t.Fatalf("RunBash ended cleanly across the kill: %v", err)
		}
	case <-time.After(mpDeadline):
		t.Fatal("RunBash did not end when the primary was killed")
	}

	second, ep := startRestartPrimary(t, "mindroom-primary (second)", bin, state, grpcAddr, "--enable-test-toolkit")
	for _, req := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/agent-cli/operations", `{"operation":"tools.list"}`},
		{http.MethodGet, "/api/agent-cli/calls/" + callID, ""},
	} {
		code, body := agentCLIStatus(t, req.method, ep.AgentCLI+req.path, string(grant), req.body)
		if code != http.StatusUnauthorized || !strings.Contains(body, "Agent CLI authority is unavailable") {
			t.Errorf("old grant on %s %s after the restart: %d %s", req.method, req.path, code, body)
		}
	}
	still := second.awaitCallApproval(t, operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_WAITING)
	if still.GetId() != waiting.GetId() {
		t.Fatalf("after the restart the waiting call is %d, want %d", still.GetId(), waiting.GetId())
	}

	decide := func() (*operatorv1.DecideCallApprovalResponse, error) {
		ctx, cancel := bearerCtx(second.admin)
		defer cancel()
		return second.operator.DecideCallApproval(ctx, &operatorv1.DecideCallApprovalRequest{
			CallApprovalId: waiting.GetId(), Decision: operatorv1.Decision_DECISION_APPROVE,
		})
	}
	if _, err := decide(); err != nil {
		t.Fatalf("approve after the restart: %v", err)
	}
	done := second.awaitCallApproval(t, operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_DONE)
	if done.GetResultStatus() != operatorv1.CallStatus_CALL_STATUS_COMPLETED || done.GetOutcomeJson() != waiting.GetArgumentsJson() {
		t.Fatalf("the approved call ended %v with %q, want its arguments echoed", done.GetResultStatus(), done.GetOutcomeJson())
	}
	if _, err := decide(); status.Code(err) != codes.Aborted {
		t.Errorf("replayed approval: %v, want Aborted", err)
	}

	if code := second.proc.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("second primary exit code %d", code)
	}
	if n := lines(t, callMarker); n != 1 {
		t.Errorf("the approved call ran %d times, want 1", n)
	}
	if n := lines(t, outerMarker); n != 1 {
		t.Errorf("the outer Bash command ran %d times, want 1", n)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(state, sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pending, err := db.PendingContinuations(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var found []store.Continuation
	for _, c := range pending {
		if strings.HasPrefix(c.IdempotencyKey, "call:") && strings.HasSuffix(c.IdempotencyKey, "/"+callID) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("continuations for call:%s: %d (all: %+v)", callID, len(found), pending)
	}
	c := found[0]
	if string(c.Checkpoint) != string(checkpoint) || c.Channel != "!room:example.org" || c.Thread != "$confirm" {
		t.Errorf("continuation %+v", c)
	}
	for _, want := range []string{"test.confirm_echo", callID, "completed", "bash-outer", "interrupted and not resumed"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("continuation text lacks %q: %s", want, c.Text)
		}
	}
}
