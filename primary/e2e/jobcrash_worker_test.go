package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/primary/jobs"
)

// TestASIGKILLLoopOfTheWorkerLosesNoJobOutcome is the crash loop with the worker as victim:
// one primary, and a worker of one id and state directory killed again and again at a random
// instant after jobs were asked of it (before it read the StartJob, before it saved the job's
// record, between the record and the process, while the job runs, around its end), and
// started again. Every job ends: with its own exit code and output, or as one that never ran
// (could not start, or, when the worker came back without it, unknown), and a job reported as
// never run did not run. None runs twice, none stays running, each has one continuation.
func TestASIGKILLLoopOfTheWorkerLosesNoJobOutcome(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	began := time.Now()
	bin := mpBuild(t)
	state, workerState, work := shellTempDir(t), shellTempDir(t), shellprivtest.BinaryDir(t)
	grpcAddr := freeLoopbackAddr(t)
	prim, _ := startRestartPrimary(t, "mindroom-primary", bin, state, grpcAddr, "--worker-keys", "key-a")
	credential, err := os.ReadFile(filepath.Join(state, "credentials", "workers", "key-a.token"))
	if err != nil {
		t.Fatal(err)
	}
	startWorker := func(name string) *mpProc {
		w := mpStart(t, name, filepath.Join(bin, "mindroom-worker"),
			mpBaseEnv(t, "MINDROOM_WORKER_CREDENTIAL="+strings.TrimSpace(string(credential))),
			"--primary", grpcAddr, "--key", "key-a", "--id", "w1", "--state-dir", workerState, "--log-level", "info")
		w.waitLog(t, "connected to primary", 1)
		return w
	}
	loop := newCrashLoop(t, work)
	var workers []*mpProc
	for round := range crashRounds {
		w := startWorker(fmt.Sprintf("mindroom-worker (round %d)", round))
		workers = append(workers, w)
		loop.round(t, round, prim, "key-a", w)
	}

	workers = append(workers, startWorker("mindroom-worker (last)"))
	all, outcomes := loop.settle(t, prim, func(id int64, j crashJob, rec *operatorv1.Job) string {
		switch out := rec.GetOutcome(); {
		case strings.HasPrefix(out, "could not start"):
			checkNeverRan(t, id, j, rec, work)
			return "could not start"
		case out == jobs.OutcomeUnknown:
			// The worker saves a job's record before it launches it, and came back on the same
			// state without the job: it never took it. Its command must not have run.
			checkNeverRan(t, id, j, rec, work)
			return "unknown: the worker came back without it"
		}
		return checkRanAsItself(t, id, j, rec, work)
	})
	recovery := logCounts(workers, "job found running again", "job ended while the worker was stopped",
		"job's process named by its identity file", "job given up: the restart came before its process started")
	for msg, n := range logCounts([]*mpProc{prim.proc}, "worker no longer holds a job; its outcome is unknown") {
		recovery["primary: "+msg] = n
	}
	if code := prim.proc.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("primary exit code %d", code)
	}
	checkOneContinuationEach(t, state, all)
	checkNoneLeftRunning(t, filepath.Join(workerState, "jobs"), all)
	t.Log(loop.summary(all, outcomes, recovery, began))
}
