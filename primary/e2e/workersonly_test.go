package e2e

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/response"
)

// A primary run --workers-only opens no response without a worker key, over gRPC and REST
// alike, so nothing an agent runs can reach the primary's host; a response on a worker opens
// and runs as always.
func TestAWorkersOnlyPrimaryRefusesLocalResponses(t *testing.T) {
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Responses.WorkersOnly = true }))
	env.StartWorker(t, "key-a", "worker-a1")

	for _, mode := range []responsev1.ShellMode{responsev1.ShellMode_SHELL_MODE_STANDARD, responsev1.ShellMode_SHELL_MODE_MINIMAL} {
		t.Run("GRPCWithoutAWorkerKeyIsAFailedPrecondition/"+mode.String(), func(t *testing.T) {
			_, err := env.Runtime.OpenResponse(context.Background(), &responsev1.OpenResponseRequest{
				AgentName: "tester", RequesterId: "@alice:example.org", ShellMode: mode,
				Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$thread"},
			})
			if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != response.ErrWorkersOnly.Message {
				t.Fatalf("OpenResponse without a worker key: %v; want FailedPrecondition %q", err, response.ErrWorkersOnly.Message)
			}
		})
	}
	t.Run("NoWorkspaceIsPreparedOnThePrimary", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(env.StateDir, "workspaces", "tester")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the refused agent's workspace on the primary: %v, want none", err)
		}
	})
	t.Run("RESTWithoutAWorkerKeyIs400", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, env.HTTPURL+"/v1/responses",
			strings.NewReader(`{"agent_name":"tester","requester_id":"@alice:example.org"}`))
		req.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"code":9,`) || !strings.Contains(string(body), "--workers-only") {
			t.Fatalf("POST /v1/responses without a worker key: %d %s, want 400 with code 9 naming --workers-only", resp.StatusCode, body)
		}
	})
	t.Run("AResponseOnAWorkerRuns", func(t *testing.T) {
		id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })
		if run := env.RunBash(t, id, "b1", "echo on-a-worker"); run.Result.GetExitCode() != 0 || run.Stdout != "on-a-worker\n" {
			t.Fatalf("exit %d stdout %q stderr %q", run.Result.GetExitCode(), run.Stdout, run.Stderr)
		}
	})
}
