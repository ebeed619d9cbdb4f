package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// TestWorkers runs real Bash and the real mindroom-agent on in-process workers (testenv): each
// shell reaches the primary only through its own worker's sandbox proxy.
func TestWorkers(t *testing.T) {
	credential := testenv.WorkerCredential("key-a")
	// The worker's process environment holds its credential, as mindroom-worker's may.
	t.Setenv("MINDROOM_WORKER_CREDENTIAL", credential)
	env := testenv.Start(t)
	a := env.StartWorker(t, "key-a", "wk-a")
	b := env.StartWorker(t, "key-b", "wk-b")
	onA := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })
	onB := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-b" })

	t.Run("ShellsOnWorkersOfTwoKeysRunAtOnceEachThroughItsOwnProxy", func(t *testing.T) {
		cases := []struct {
			id, gate string
			w        *testenv.Worker
		}{{onA, "wk-gate-a", a}, {onB, "wk-gate-b", b}}
		runs := make([]testenv.BashRun, len(cases))
		var wg sync.WaitGroup
		for i, tc := range cases {
			wg.Go(func() {
				runs[i] = env.RunBashContext(context.Background(), t, tc.id, tc.gate,
					`echo "$MINDROOM_AGENT_CLI_URL"; mindroom-agent tools call test.gate '{"name":"`+tc.gate+`"}'`, 0)
			})
		}
		for _, tc := range cases { // both commands hold a call at the same time
			<-env.Primary.Internals().TestToolkit.Started(tc.gate)
		}
		for _, tc := range cases {
			env.Primary.Internals().TestToolkit.Release(tc.gate)
		}
		wg.Wait()
		for i, tc := range cases {
			run := runs[i]
			if first := strings.SplitN(run.Stdout, "\n", 2)[0]; first != tc.w.ProxyURL() || run.Result.GetExitCode() != 0 {
				t.Errorf("%s: exit %d stdout %q stderr %q; want the call through %s", tc.gate, run.Result.GetExitCode(), run.Stdout, run.Stderr, tc.w.ProxyURL())
			}
			if rs := run.Result.GetReceipts(); len(rs) != 1 || rs[0].GetParentBashCallId() != tc.gate || rs[0].GetOutcomeJson() != `{"released":"`+tc.gate+`"}` {
				t.Errorf("%s: receipts = %v", tc.gate, rs)
			}
		}
	})

	t.Run("NestedShellRunsOnTheSameWorkerAndItsCallJoinsTheOuterWindow", func(t *testing.T) {
		run := env.RunBash(t, onA, "wk-outer",
			`mindroom-agent tools call shell.run_shell_command '{"command":"echo \"$MINDROOM_AGENT_CLI_URL $PWD\"; mindroom-agent tools call test.echo {}"}'`)
		if run.Result.GetExitCode() != 0 {
			t.Fatalf("exit %d stdout %q stderr %q", run.Result.GetExitCode(), run.Stdout, run.Stderr)
		}
		byFn := receiptsByFunction(run.Result.GetReceipts())
		shell, echo := byFn["shell.run_shell_command"], byFn["test.echo"]
		if len(run.Result.GetReceipts()) != 2 || shell.GetParentBashCallId() != "wk-outer" || echo.GetParentBashCallId() != "wk-outer" ||
			echo.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Fatalf("receipts = %v, want the nested call in the outer window", run.Result.GetReceipts())
		}
		var res struct {
			Stdout string `json:"stdout"`
		}
		if err := json.Unmarshal([]byte(shell.GetOutcomeJson()), &res); err != nil {
			t.Fatal(err)
		}
		want := a.ProxyURL() + " " + filepath.Join(a.StateDir, "workspaces", "tester")
		if got := strings.SplitN(res.Stdout, "\n", 2)[0]; got != want {
			t.Errorf("nested shell ran at %q, want %q (worker wk-a)", got, want)
		}
	})

	t.Run("WorkerCredentialNeverReachesAWorkerShell", func(t *testing.T) {
		run := env.RunBash(t, onA, "wk-env", `env`)
		if run.Result.GetExitCode() != 0 || !strings.Contains(run.Stdout, "MINDROOM_AGENT_CLI_TOKEN=") {
			t.Fatalf("env: exit %d stderr %q", run.Result.GetExitCode(), run.Stderr)
		}
		if strings.Contains(run.Stdout, credential) || strings.Contains(run.Stdout, "MINDROOM_WORKER_CREDENTIAL") {
			t.Errorf("the worker's credential reached its shell:\n%s", run.Stdout)
		}
	})

	t.Run("GrantOfAResponseOnAnotherWorkerIsAuthorityUnavailableInAShell", func(t *testing.T) {
		w, err := env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: onA, BashCallId: "wk-steal-source"})
		if err != nil {
			t.Fatal(err)
		}
		stolen := w.GetEnvironment()["MINDROOM_AGENT_CLI_TOKEN"]
		steps := newStepFiles(t)
		run := env.RunBashContext(context.Background(), t, onB, "wk-steal", steps.Prelude()+
			`step own mindroom-agent tools list --limit 1
MINDROOM_AGENT_CLI_TOKEN=`+bashQuote(stolen)+` step stolen mindroom-agent tools list --limit 1`, 30*time.Second)
		if run.Result.GetExitCode() != 0 {
			t.Fatalf("exit %d stderr %q", run.Result.GetExitCode(), run.Stderr)
		}
		if own := steps.Get(t, "own"); own.code != 0 {
			t.Errorf("own grant: %+v", own)
		}
		stolenStep := steps.Get(t, "stolen")
		msg := expectError(t, stolenStep.code, stolenStep.stdout, stolenStep.stderr, 4, "")
		if want := "Agent CLI authority is unavailable (HTTP 401 from " + b.ProxyURL(); !strings.HasPrefix(msg, want) {
			t.Errorf("message = %q, want it to start with %q", msg, want)
		}
	})
}
