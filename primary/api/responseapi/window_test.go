package responseapi_test

import (
	"context"
	"os/exec"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// TestGetWindowReportsTheWindowAsItStands: a real mindroom-agent, run with the environment
// OpenWindow returned, leaves a gate call running; GetWindow shows it without waiting, and
// shows the window closed with the call completed once the gate opened and CloseWindow returned.
func TestGetWindowReportsTheWindowAsItStands(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	id := env.Open(t)
	win, err := env.Runtime.OpenWindow(ctx, &responsev1.OpenWindowRequest{ResponseId: id, BashCallId: "own-shell"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(env.AgentBinary, "tools", "call", "test.gate", `{"name":"get-window"}`, "--timeout", "0")
	for k, v := range win.GetEnvironment() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.Output(); cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("tools call: %v %s", err, out)
	}
	<-env.Primary.Internals().TestToolkit.Started("get-window")

	get := func(t *testing.T) *responsev1.GetWindowResponse {
		t.Helper()
		got, err := env.Runtime.GetWindow(ctx, &responsev1.GetWindowRequest{ResponseId: id, BashCallId: "own-shell"})
		if err != nil {
			t.Fatalf("GetWindow: %v", err)
		}
		return got
	}
	open := get(t)
	if open.GetState() != responsev1.WindowState_WINDOW_STATE_OPEN || open.GetUnsettled() != 1 || len(open.GetReceipts()) != 1 ||
		open.GetReceipts()[0].GetFunction() != "gate" || open.GetReceipts()[0].GetStatus() != responsev1.CallStatus_CALL_STATUS_RUNNING ||
		open.GetReceipts()[0].GetParentBashCallId() != "own-shell" {
		t.Fatalf("open window: %v", open)
	}

	env.Primary.Internals().TestToolkit.Release("get-window")
	closed, err := env.Runtime.CloseWindow(ctx, &responsev1.CloseWindowRequest{ResponseId: id, BashCallId: "own-shell"})
	if err != nil || len(closed.GetReceipts()) != 1 {
		t.Fatalf("CloseWindow: %v %v", closed, err)
	}
	after := get(t)
	if after.GetState() != responsev1.WindowState_WINDOW_STATE_CLOSED || after.GetUnsettled() != 0 || len(after.GetReceipts()) != 1 ||
		after.GetReceipts()[0].GetCallId() != open.GetReceipts()[0].GetCallId() ||
		after.GetReceipts()[0].GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
		t.Fatalf("closed window: %v", after)
	}

	for name, req := range map[string]*responsev1.GetWindowRequest{
		"UnknownWindow":   {ResponseId: id, BashCallId: "never-opened"},
		"UnknownResponse": {ResponseId: "no-such-response", BashCallId: "own-shell"},
	} {
		if _, err := env.Runtime.GetWindow(ctx, req); status.Code(err) != codes.NotFound {
			t.Errorf("%s: %v, want NotFound", name, err)
		}
	}
}
