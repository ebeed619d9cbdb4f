package e2e

import (
	"strings"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

func TestWorkerShellCallsThroughItsOwnProxy(t *testing.T) {
	env := testenv.Start(t)
	w := env.StartWorker(t, "key-a", "worker-a1")
	id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })
	run := env.RunBash(t, id, "w1", `echo "$MINDROOM_AGENT_CLI_URL"; mindroom-agent tools call test.echo '{"on":"worker"}'`)
	lines := strings.Split(strings.TrimSpace(run.Stdout), "\n")
	if run.Result.GetExitCode() != 0 || len(lines) != 2 || lines[0] != w.ProxyURL() {
		t.Fatalf("exit %d stdout %q stderr %q", run.Result.GetExitCode(), run.Stdout, run.Stderr)
	}
	if rs := run.Result.GetReceipts(); len(rs) != 1 || rs[0].GetOutcomeJson() != `{"on":"worker"}` {
		t.Errorf("receipts = %v", rs)
	}
}
