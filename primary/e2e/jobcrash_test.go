package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// The crash loop: this many primaries, each killed this long at most after it was asked to
// launch its jobs, each job sleeping this long at most, so kills land at every step of a
// launch and around the jobs' ends.
const (
	crashRounds       = 20
	crashMaxJobs      = 3 // per round, in one thread: the per-thread cap
	crashMaxKillAfter = 400 * time.Millisecond
	crashMaxSleep     = 300 * time.Millisecond
	// A whole launch takes milliseconds on an idle host (far more on a loaded one), so kills
	// spread over crashMaxKillAfter would nearly all land after it. Half the rounds, chosen at
	// random, are killed within the slowest launch seen so far instead: this guess until one
	// is measured.
	crashFirstLaunchGuess = 50 * time.Millisecond
)

// crashSeedEnv replays a failed run: the seed is logged.
const crashSeedEnv = "TURNCLI_CRASH_SEED"

// crashSeed is the seed of this run's choices: jobs per round, their sleeps, when each
// primary or worker dies. A kill within a launch is a fraction of the launch time measured in
// this run, so each round logs the instant it was killed at.
func crashSeed(t *testing.T) int64 {
	t.Helper()
	seed := time.Now().UnixNano()
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, s, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, crashSeedEnv, seed)
	return seed
}

// crashJob is one launched job: n names its command, whose results are its own.
type crashJob struct {
	n     int
	round int
	sleep time.Duration
}

// command appends to its ran file first (so a run is counted, and a second run shows), then
// prints and exits with results only it has.
func (j crashJob) command(work string) string {
	return fmt.Sprintf("echo run >> %s; sleep %.3f; echo out-%d; exit %d",
		j.ranPath(work), j.sleep.Seconds(), j.n, j.exitCode())
}

func (j crashJob) exitCode() int { return j.n % 7 }

func (j crashJob) ranPath(work string) string {
	return filepath.Join(work, "ran-"+strconv.Itoa(j.n))
}

// crashCommandN reads n back from a recorded command, for jobs whose launch call died before
// it returned their id.
var crashCommandN = regexp.MustCompile(`echo out-(\d+);`)

// crashLoop launches jobs and kills a process at random instants, and remembers what it
// launched.
type crashLoop struct {
	rng  *rand.Rand
	work string // where the jobs' ran files are

	mu            sync.Mutex
	next          int                // the next job's n
	byN           map[int]crashJob   // every job launched
	returned      map[int64]crashJob // the jobs whose launch returned an id
	lost          int                // launches that returned no id: never accepted, as far as the caller knows
	slowestLaunch time.Duration
}

func newCrashLoop(t *testing.T, work string) *crashLoop {
	return &crashLoop{rng: rand.New(rand.NewSource(crashSeed(t))), work: work, byN: map[int]crashJob{},
		returned: map[int64]crashJob{}, slowestLaunch: crashFirstLaunchGuess}
}

// round asks rig for 1..crashMaxJobs background jobs in a new thread (on a worker of
// workerKey, when set), and SIGKILLs victim at a random instant after asking.
func (l *crashLoop) round(t *testing.T, round int, rig *restartRig, workerKey string, victim *mpProc) {
	t.Helper()
	thread := "$crash-" + strconv.Itoa(round)
	rig.setMode(t, thread, operatorv1.Mode_MODE_ADMIN)
	// Every random choice is made here, in order, so the seed alone replays them.
	l.mu.Lock()
	batch := make([]crashJob, 1+l.rng.Intn(crashMaxJobs))
	for i := range batch {
		batch[i] = crashJob{n: l.next, round: round, sleep: time.Duration(l.rng.Int63n(int64(crashMaxSleep) + 1))}
		l.byN[l.next] = batch[i]
		l.next++
	}
	inLaunch, frac := l.rng.Intn(2) == 0, l.rng.Float64()
	killAfter := time.Duration(frac * float64(crashMaxKillAfter))
	if inLaunch {
		killAfter = time.Duration(frac * float64(min(l.slowestLaunch, crashMaxKillAfter)))
	}
	l.mu.Unlock()

	var wg sync.WaitGroup
	issued := time.Now()
	for _, j := range batch {
		wg.Go(func() {
			id, _, _ := rig.launchBackground(workerKey, thread, j.command(l.work), "job_id")
			took := time.Since(issued)
			l.mu.Lock()
			defer l.mu.Unlock()
			if id == 0 {
				l.lost++
				return
			}
			l.returned[id] = j
			l.slowestLaunch = max(l.slowestLaunch, took)
		})
	}
	time.Sleep(killAfter)
	if code := victim.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("round %d: %s exit code %d after SIGKILL", round, victim.name, code)
	}
	wg.Wait()
	t.Logf("round %d: %d jobs, killed after %v (within a launch: %v)", round, len(batch), killAfter.Round(time.Microsecond), inLaunch)
}

// settle waits, on the last rig, for every recorded job to finish, checks each with check
// (given the job's own command), and returns how many ended each way. Every job acknowledged
// must be recorded, and none may still run.
func (l *crashLoop) settle(t *testing.T, last *restartRig, check func(int64, crashJob, *operatorv1.Job) string) (map[int64]*operatorv1.Job, map[string]int) {
	t.Helper()
	all := last.allJobs(t)
	for id := range l.returned {
		if _, ok := all[id]; !ok {
			t.Errorf("job %d was acknowledged but is not recorded", id)
		}
	}
	outcomes := map[string]int{}
	for id := range all {
		rec := last.awaitJob(t, id, "finished", finished)
		m := crashCommandN.FindStringSubmatch(rec.GetCommand())
		if m == nil {
			t.Errorf("job %d runs %q, no command of this test", id, rec.GetCommand())
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if want, ok := l.returned[id]; ok && want.n != n {
			t.Errorf("job %d was acknowledged for command %d but runs command %d", id, want.n, n)
		}
		outcomes[check(id, l.byN[n], rec)]++
	}
	if running := last.jobsIn(t, operatorv1.JobStatus_JOB_STATUS_RUNNING); len(running) != 0 {
		t.Errorf("%d jobs still running after they all finished", len(running))
	}
	return all, outcomes
}

// summary is the loop's numbers, for the log.
func (l *crashLoop) summary(all map[int64]*operatorv1.Job, outcomes, recovery map[string]int, began time.Time) string {
	return fmt.Sprintf("%d launches: %d recorded (%d acknowledged), %d never acknowledged; slowest launch %v; outcomes %v; recovery %v; %v",
		l.next, len(all), len(l.returned), l.lost, l.slowestLaunch.Round(time.Millisecond), outcomes, recovery,
		time.Since(began).Round(time.Millisecond))
}

// logCounts counts, over the processes' logs, the lines of each message.
func logCounts(procs []*mpProc, msgs ...string) map[string]int {
	out := map[string]int{}
	for _, p := range procs {
		for _, msg := range msgs {
			out[msg] += p.log.count(msg)
		}
	}
	return out
}

// TestASIGKILLLoopLosesNoJobOutcome kills the real primary, again and again on one state
// directory, at a random instant after it was asked to launch a few background jobs: before a
// job is recorded, between its record and its process, between its process and the record of
// its pid, while it runs and around its end. A last primary then settles everything: every job
// ends with its own exit code and output, or provably never ran; none runs twice, none stays
// running, and each has exactly one continuation.
func TestASIGKILLLoopLosesNoJobOutcome(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	began := time.Now()
	bin := mpBuild(t)
	state, work := shellTempDir(t), shellprivtest.BinaryDir(t)
	grpcAddr := freeLoopbackAddr(t)
	loop := newCrashLoop(t, work)
	var primaries []*mpProc
	for round := range crashRounds {
		rig, _ := startRestartPrimary(t, fmt.Sprintf("mindroom-primary (round %d)", round), bin, state, grpcAddr)
		primaries = append(primaries, rig.proc)
		loop.round(t, round, rig, "", rig.proc)
	}

	last, _ := startRestartPrimary(t, "mindroom-primary (last)", bin, state, grpcAddr)
	primaries = append(primaries, last.proc)
	all, outcomes := loop.settle(t, last, func(id int64, j crashJob, rec *operatorv1.Job) string {
		return checkCrashOutcome(t, id, j, rec, work)
	})
	recovery := logCounts(primaries, "job re-attached", "job found dead after restart",
		"job's process named by its identity file", "job given up: the restart came before its process started")
	if code := last.proc.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("last primary exit code %d", code)
	}
	checkOneContinuationEach(t, state, all)
	checkNoneLeftRunning(t, filepath.Join(state, "jobs"), all)
	t.Log(loop.summary(all, outcomes, recovery, began))
}

// checkCrashOutcome checks a finished job of the primary loop against what its command did,
// and returns the kind of its outcome: its own exit, or never started.
func checkCrashOutcome(t *testing.T, id int64, j crashJob, rec *operatorv1.Job, work string) string {
	t.Helper()
	switch rec.GetOutcome() {
	case jobs.OutcomeNeverStarted:
		checkNeverRan(t, id, j, rec, work)
		return "never started"
	case jobs.OutcomeUnknown:
		t.Errorf("job %d (command %d, round %d): outcome unknown (exit %v, ran %d times, tail %q)",
			id, j.n, j.round, exitOf(rec), lines(t, j.ranPath(work)), rec.GetTail())
		return "unknown"
	}
	return checkRanAsItself(t, id, j, rec, work)
}

// checkNeverRan checks a job reported as never run: its command did not run, and it has no
// exit code.
func checkNeverRan(t *testing.T, id int64, j crashJob, rec *operatorv1.Job, work string) {
	t.Helper()
	if runs := lines(t, j.ranPath(work)); runs != 0 || rec.ExitCode != nil {
		t.Errorf("job %d (command %d, round %d) is %q, yet ran %d times, exit %v", id, j.n, j.round, rec.GetOutcome(), runs, exitOf(rec))
	}
}

// checkRanAsItself checks a job reported as run: once, with its own exit code and output. It
// returns "exit <code>".
func checkRanAsItself(t *testing.T, id int64, j crashJob, rec *operatorv1.Job, work string) string {
	t.Helper()
	want := j.exitCode()
	wantOutcome := fmt.Sprintf("(exit %d)", want)
	if want == 0 {
		wantOutcome = "success"
	}
	if runs := lines(t, j.ranPath(work)); rec.ExitCode == nil || int(rec.GetExitCode()) != want || !strings.Contains(rec.GetOutcome(), wantOutcome) ||
		!strings.Contains(rec.GetTail(), "out-"+strconv.Itoa(j.n)) || runs != 1 {
		t.Errorf("job %d (command %d, round %d): outcome %q exit %v tail %q, ran %d times; want exit %d, its output, once",
			id, j.n, j.round, rec.GetOutcome(), exitOf(rec), rec.GetTail(), runs, want)
	}
	return "exit " + strconv.Itoa(want)
}

// exitOf is a job's exit code for messages: "none" when unset.
func exitOf(j *operatorv1.Job) string {
	if j.ExitCode == nil {
		return "none"
	}
	return strconv.Itoa(int(j.GetExitCode()))
}

// checkOneContinuationEach checks, in the stopped primary's store, that each job has told its
// conversation exactly once.
func checkOneContinuationEach(t *testing.T, state string, all map[int64]*operatorv1.Job) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(state, sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cs, err := db.PendingContinuations(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range cs {
		count[c.IdempotencyKey]++
	}
	for id := range all {
		if n := count["job:"+strconv.FormatInt(id, 10)]; n != 1 {
			t.Errorf("job %d has %d continuations, want 1", id, n)
		}
	}
}

// checkNoneLeftRunning checks that no finished job's process, as named in its identity file
// under dir, still runs.
func checkNoneLeftRunning(t *testing.T, dir string, all map[int64]*operatorv1.Job) {
	t.Helper()
	for id := range all {
		idPath := filepath.Join(dir, strconv.FormatInt(id, 10)+".proc")
		if p, st := jobproc.ReadIdentity(idPath); st == jobproc.IdentityWritten && jobproc.Alive(p.Pid, p.Start) {
			t.Errorf("job %d finished, but its process %d still runs", id, p.Pid)
		}
	}
}

// allJobs returns every job the primary has recorded, by id.
func (r *restartRig) allJobs(t *testing.T) map[int64]*operatorv1.Job {
	t.Helper()
	out := map[int64]*operatorv1.Job{}
	for _, j := range r.jobsIn(t, operatorv1.JobStatus_JOB_STATUS_UNSPECIFIED) {
		out[int64(j.GetId())] = j
	}
	return out
}

// jobsIn returns the jobs in the status (every job when unspecified), newest first.
func (r *restartRig) jobsIn(t *testing.T, status operatorv1.JobStatus) []*operatorv1.Job {
	t.Helper()
	var out []*operatorv1.Job
	token := ""
	for {
		ctx, cancel := bearerCtx(r.admin)
		resp, err := r.operator.ListJobs(ctx, &operatorv1.ListJobsRequest{Status: status, PageSize: 1000, PageToken: token})
		cancel()
		if err != nil {
			t.Fatalf("ListJobs: %v", err)
		}
		out = append(out, resp.GetJobs()...)
		if token = resp.GetNextPageToken(); token == "" {
			return out
		}
	}
}
