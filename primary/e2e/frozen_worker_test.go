package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
)

// TestAFrozenWorkerIsFoundAndItsCommandsKeepTheirDeadlines stops a real worker process with
// SIGSTOP, as a swapped-out or frozen host would: its kernel still holds the TCP stream, so
// only the worker's own silence tells. A command sent to it ends at its 5 s timeout as timed
// out (not 50 s later as a success), the worker is disconnected within the liveness timeout,
// and once thawed it reconnects, runs commands again, and a background job that finished
// while it was frozen is recorded once, with its own exit.
func TestAFrozenWorkerIsFoundAndItsCommandsKeepTheirDeadlines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	const (
		pingInterval    = 500 * time.Millisecond
		livenessTimeout = 8 * time.Second // past the command's timeout, so the deadline is what ends it
		commandTimeout  = 5 * time.Second
	)
	bin := mpBuild(t)
	state, workerState, work := shellTempDir(t), shellTempDir(t), shellprivtest.BinaryDir(t)
	grpcAddr := freeLoopbackAddr(t)
	prim, _ := startRestartPrimary(t, "mindroom-primary", bin, state, grpcAddr, "--worker-keys", "key-a",
		"--worker-ping-interval", pingInterval.String(), "--worker-liveness-timeout", livenessTimeout.String())
	credential, err := os.ReadFile(filepath.Join(state, "credentials", "workers", "key-a.token"))
	if err != nil {
		t.Fatal(err)
	}
	w := mpStart(t, "mindroom-worker", filepath.Join(bin, "mindroom-worker"),
		mpBaseEnv(t, "MINDROOM_WORKER_CREDENTIAL="+strings.TrimSpace(string(credential))),
		"--primary", grpcAddr, "--key", "key-a", "--id", "w1", "--state-dir", workerState, "--log-level", "info")
	w.waitLog(t, "connected to primary", 1)

	// A job that ends while the worker is frozen; its supervisor is not the worker process.
	prim.setMode(t, "$frozen", operatorv1.Mode_MODE_ADMIN)
	jobRuns := filepath.Join(work, "job-runs")
	job := prim.background(t, "key-a", "$frozen", "sleep 1; echo ran >> "+jobRuns, "job_id")

	ctx, cancel := bearerCtx(prim.runtime)
	defer cancel()
	resp, err := prim.api.OpenResponse(ctx, &responsev1.OpenResponseRequest{AgentName: "tester", RequesterId: "admin", WorkerKey: "key-a"})
	if err != nil {
		t.Fatalf("OpenResponse: %v", err)
	}
	id := resp.GetResponseId()
	if out, err := mpRunBash(ctx, prim.api, id, "warm", "echo warm", nil); err != nil || out.stdout != "warm\n" {
		t.Fatalf("command before the freeze: %+v, %v", out, err)
	}

	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			_ = w.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	t.Cleanup(thaw) // the worker must be able to stop at cleanup

	stream, err := prim.api.RunBash(ctx, &responsev1.RunBashRequest{
		ResponseId: id, BashCallId: "frozen", Command: "sleep 30", Timeout: durationpb.New(commandTimeout),
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	var result *responsev1.BashResult
	for result == nil {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatalf("RunBash on the frozen worker: %v", err)
		}
		result = msg.GetResult()
	}
	took := time.Since(sent)
	t.Logf("command with a %s timeout on the frozen worker answered after %s: %v", commandTimeout, took.Round(time.Millisecond), result)
	if !result.GetTimedOut() || result.GetExitCode() != 137 || result.GetError() != "" {
		t.Fatalf("result %v, want timed out with exit 137", result)
	}
	if took < commandTimeout || took > commandTimeout+time.Second {
		t.Fatalf("answered after %s, want within a second of the %s timeout", took, commandTimeout)
	}

	prim.proc.waitLog(t, "worker stopped answering; disconnecting it", 1)
	away := time.Since(frozen)
	t.Logf("frozen worker disconnected %s after SIGSTOP (liveness timeout %s, ping every %s)", away.Round(time.Millisecond), livenessTimeout, pingInterval)
	if away > livenessTimeout+2*pingInterval+time.Second {
		t.Fatalf("disconnected after %s, want within the %s liveness timeout and a ping interval", away, livenessTimeout)
	}
	listed := func() bool {
		actx, acancel := bearerCtx(prim.admin)
		defer acancel()
		ws, err := prim.operator.ListWorkers(actx, &operatorv1.ListWorkersRequest{})
		if err != nil {
			t.Fatalf("ListWorkers: %v", err)
		}
		for _, wk := range ws.GetWorkers() {
			if wk.GetWorkerId() == "w1" {
				return true
			}
		}
		return false
	}
	// The line is logged as the hub starts closing the connection; the worker leaves the list
	// once its stream has ended, a moment later on a loaded machine.
	for gone := time.Now().Add(5 * time.Second); listed(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(gone) {
			t.Fatal("the frozen worker is still listed as connected 5s after it was disconnected")
		}
	}

	thaw()
	w.waitLog(t, "connected to primary", 2)
	if out, err := mpRunBash(ctx, prim.api, id, "after", "echo thawed", nil); err != nil || out.stdout != "thawed\n" || out.result.GetExitCode() != 0 {
		t.Fatalf("command after the thaw: %+v, %v", out, err)
	}
	rec := prim.awaitJob(t, job, "finished", func(j *operatorv1.Job) bool { return j.GetEndedAt() != nil })
	if rec.GetExitCode() != 0 {
		t.Fatalf("job finished while the worker was frozen: %v", rec)
	}
	if runs, _ := os.ReadFile(jobRuns); string(runs) != "ran\n" {
		t.Fatalf("the job ran %q, want once", runs)
	}
}
