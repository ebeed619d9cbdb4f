package e2e

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// receiptsByFunction indexes a window's receipts by toolkit.function.
func receiptsByFunction(rs []*responsev1.Receipt) map[string]*responsev1.Receipt {
	out := make(map[string]*responsev1.Receipt, len(rs))
	for _, r := range rs {
		out[r.GetToolkit()+"."+r.GetFunction()] = r
	}
	return out
}

func TestWindows(t *testing.T) {
	env := testenv.Start(t)

	t.Run("NestedShellChildSubmittedAfterOuterCommandReturnedJoinsOuterWindow", func(t *testing.T) {
		id := env.Open(t)
		// The nested command waits until the outer Bash process is gone, then calls a tool. The
		// outer window is draining by then (run_shell_command is unsettled), so the child joins it.
		nested := `while kill -0 OUTERPID 2>/dev/null; do sleep 0.02; done; mindroom-agent tools call test.echo '{"late":true}'`
		args, _ := json.Marshal(map[string]any{"command": nested, "wait_seconds": 30})
		// sed splices the outer shell's pid into the quoted arguments.
		outer := `sed "s/OUTERPID/$$/" <<'EOF' | mindroom-agent tools call shell.run_shell_command --timeout 0 --json-stdin
` + string(args) + `
EOF`
		run := env.RunBash(t, id, "outer", outer)
		if code := run.Result.GetExitCode(); code != 3 {
			t.Fatalf("outer exit = %d (stdout %q stderr %q), want 3 (submitted, still running)", code, run.Stdout, run.Stderr)
		}
		byFn := receiptsByFunction(run.Result.GetReceipts())
		child, ok := byFn["test.echo"]
		if !ok {
			t.Fatalf("the child call is not in the outer window's receipts: %v", run.Result.GetReceipts())
		}
		if child.GetParentBashCallId() != "outer" || child.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Errorf("child receipt = %v", child)
		}
		if shell := byFn["shell.run_shell_command"]; shell.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Errorf("run_shell_command receipt = %v", shell)
		}
	})

	t.Run("OverlappingWindowsAttributeEachCallToTheWindowItNames", func(t *testing.T) {
		id := env.Open(t)
		var wg sync.WaitGroup
		results := make([]testenv.BashRun, 2)
		for i, gate := range []string{"overlap-a", "overlap-b"} {
			wg.Go(func() {
				results[i] = env.RunBashContext(context.Background(), t, id, gate,
					`mindroom-agent tools call test.gate '{"name":"`+gate+`"}' --timeout 30`, 0)
			})
		}
		// Both commands are inside their windows at once: both gates are blocked.
		<-env.Primary.Internals().TestToolkit.Started("overlap-a")
		<-env.Primary.Internals().TestToolkit.Started("overlap-b")
		env.Primary.Internals().TestToolkit.Release("overlap-a")
		env.Primary.Internals().TestToolkit.Release("overlap-b")
		wg.Wait()
		for i, want := range []string{"overlap-a", "overlap-b"} {
			rs := results[i].Result.GetReceipts()
			if len(rs) != 1 || rs[0].GetParentBashCallId() != want || rs[0].GetOutcomeJson() != `{"released":"`+want+`"}` {
				t.Errorf("window %s receipts = %v", want, rs)
			}
		}
	})

	t.Run("CommandThatSubmitsAndExitsReturnsOnlyAfterItsCallSettled", func(t *testing.T) {
		id := env.Open(t)
		done := make(chan testenv.BashRun, 1)
		go func() {
			done <- env.RunBash(t, id, "drain", `mindroom-agent tools call test.gate '{"name":"drain"}' --timeout 0`)
		}()
		<-env.Primary.Internals().TestToolkit.Started("drain")
		select {
		case run := <-done:
			t.Fatalf("RunBash returned before its window's call settled: %v", run.Result)
		default:
		}
		env.Primary.Internals().TestToolkit.Release("drain")
		run := <-done
		if rs := run.Result.GetReceipts(); len(rs) != 1 || rs[0].GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Fatalf("receipts = %v", rs)
		}
	})
}
