package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/primary/store/postgres"
)

// failoverRuntimeToken is the runtime credential both primaries are configured with.
const failoverRuntimeToken = "failover-runtime-credential-0123456789"

// startContender starts a real primary with --active-standby on the store url, on its own
// state directory and addresses, and waits until it leads or stands by (leads false).
func startContender(t *testing.T, name, bin, url, state, grpcAddr string) *mpProc {
	t.Helper()
	return mpStart(t, name, filepath.Join(bin, "mindroom-primary"), mpBaseEnv(t, "MINDROOM_RUNTIME_TOKEN="+failoverRuntimeToken),
		"--state-dir", state, "--store", url, "--active-standby", "--grpc-listen", grpcAddr,
		"--http-listen", "127.0.0.1:0", "--agent-cli-listen", "127.0.0.1:0", "--log-level", "info")
}

// askQuestion leaves a question form waiting in thread, asked through a response of r.
func (r *restartRig) askQuestion(t *testing.T, thread string) {
	t.Helper()
	ctx, cancel := bearerCtx(r.runtime)
	defer cancel()
	resp, err := r.api.OpenResponse(ctx, &responsev1.OpenResponseRequest{
		AgentName: "tester", RequesterId: "admin", Flags: []string{"requester_trusted"}, ShellMode: responsev1.ShellMode_SHELL_MODE_MINIMAL,
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: thread},
	})
	if err != nil {
		t.Fatalf("OpenResponse: %v", err)
	}
	out, err := mpRunBash(ctx, r.api, resp.GetResponseId(), "ask",
		`mindroom-agent tools call interaction.ask_questions '{"title":"Deploy?","questions":[{"id":"go","prompt":"Ship it?","type":"single","options":[{"label":"Yes","value":"yes"}]}]}'`, nil)
	if err != nil || out.result.GetExitCode() != 0 {
		t.Fatalf("ask_questions: %v %q %q", err, out.stdout, out.stderr)
	}
}

// TestFailoverBetweenActiveAndStandbyPrimaries runs two real primaries on one PostgreSQL with
// a worker following them. Killing the leader (SIGKILL) with a job running on the worker, an
// approval pending and a question waiting: the standby serves within the lease's time, the
// job finishes once, the approval runs once, the question is answered once. Then the new
// leader is paused (SIGSTOP) until the restarted first primary takes over, and resumed: it
// writes nothing more and exits non-zero.
func TestFailoverBetweenActiveAndStandbyPrimaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	ctx := context.Background()
	url, err := pgtest.StartForTest(t).CreateDatabase(ctx, "turncli")
	if err != nil {
		t.Fatal(err)
	}
	bin := mpBuild(t)
	work := shellprivtest.BinaryDir(t)
	stateA, stateB := shellTempDir(t), shellTempDir(t)
	grpcA, grpcB := freeLoopbackAddr(t), freeLoopbackAddr(t)
	// Both primaries know the worker's credential.
	credential := "failover-worker-credential-0123456789"
	for _, state := range []string{stateA, stateB} {
		dir := filepath.Join(state, "credentials", "workers")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "key-a.token"), []byte(credential+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	a := startContender(t, "mindroom-primary (a)", bin, url, stateA, grpcA)
	leaderA, _ := connectRig(t, a, stateA)
	leaderA.runtime = failoverRuntimeToken
	b := startContender(t, "mindroom-primary (b)", bin, url, stateB, grpcB)
	b.waitLog(t, "primary standing by", 1)
	w := mpStart(t, "mindroom-worker", filepath.Join(bin, "mindroom-worker"),
		mpBaseEnv(t, "MINDROOM_WORKER_CREDENTIAL="+credential),
		"--primary", grpcB+","+grpcA, "--key", "key-a", "--id", "w1", "--state-dir", shellTempDir(t), "--log-level", "info")
	if line := w.waitLog(t, "connected to primary", 1); line["primary"] != grpcA {
		t.Fatalf("the worker connected to %v, want the leader %s", line["primary"], grpcA)
	}

	leaderA.setMode(t, "$worker", operatorv1.Mode_MODE_ADMIN)
	leaderA.setMode(t, "$approve", operatorv1.Mode_MODE_AUTO)
	gate, jobRuns, approvedRuns := filepath.Join(work, "job.gate"), filepath.Join(work, "job.runs"), filepath.Join(work, "approved.runs")
	job := leaderA.background(t, "key-a", "$worker",
		"echo started; echo run >> "+jobRuns+"; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo job-done", "job_id")
	pending := leaderA.background(t, "key-a", "$approve", "echo run >> "+approvedRuns, "approval_id")
	leaderA.askQuestion(t, "$ask")
	leaderA.awaitJob(t, job, "running", func(j *operatorv1.Job) bool { return strings.Contains(j.GetTail(), "started") })

	// SIGKILL of the leader: the standby takes over.
	killed := time.Now()
	if code := a.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("primary exit code %d after SIGKILL", code)
	}
	b.waitLog(t, "primary serving", 1)
	takeover := time.Since(killed)
	t.Logf("takeover after SIGKILL of the leader: %v (default lease: TTL 3s, renewed every 1s)", takeover)
	if takeover > 5*time.Second {
		t.Errorf("the standby served %v after the leader died, want at most 5s", takeover)
	}
	leaderB, _ := connectRig(t, b, stateB)
	leaderB.runtime, leaderB.admin = failoverRuntimeToken, leaderA.admin // one store: the same operators
	if line := w.waitLog(t, "connected to primary", 2); line["primary"] != grpcB {
		t.Fatalf("the worker reconnected to %v, want the new leader %s", line["primary"], grpcB)
	}

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if j := leaderB.awaitJob(t, job, "finished", finished); j.GetOutcome() != "success" || !strings.Contains(j.GetTail(), "job-done") {
		t.Errorf("the worker's job on the new leader: outcome %q tail %q", j.GetOutcome(), j.GetTail())
	}
	decide := func() (*operatorv1.DecideApprovalResponse, error) {
		ctx, cancel := bearerCtx(leaderB.admin)
		defer cancel()
		return leaderB.operator.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: uint64(pending), Decision: operatorv1.Decision_DECISION_APPROVE})
	}
	resp, err := decide()
	if err != nil {
		t.Fatalf("approve on the new leader: %v", err)
	}
	approvedJob := int64(resp.GetApproval().GetJobId())
	if j := leaderB.awaitJob(t, approvedJob, "finished", finished); j.GetOutcome() != "success" {
		t.Errorf("approved job: %q", j.GetOutcome())
	}
	if _, err := decide(); status.Code(err) != codes.Aborted {
		t.Errorf("a second decision: %v, want Aborted", err)
	}
	questionCtx, cancel := bearerCtx(leaderB.admin)
	defer cancel()
	qs, err := leaderB.operator.ListQuestions(questionCtx, &operatorv1.ListQuestionsRequest{})
	if err != nil || len(qs.GetQuestions()) != 1 {
		t.Fatalf("questions on the new leader: %v, %v", qs, err)
	}
	q := qs.GetQuestions()[0]
	submit := func() error {
		_, err := leaderB.operator.SubmitQuestionAnswers(questionCtx, &operatorv1.SubmitQuestionAnswersRequest{
			QuestionId: q.GetId(), Revision: q.GetRevision(), AnswersJson: `{"go":{"values":["yes"]}}`})
		return err
	}
	if err := submit(); err != nil {
		t.Fatalf("answer the question on the new leader: %v", err)
	}
	if err := submit(); status.Code(err) != codes.Aborted {
		t.Errorf("a second answer: %v, want Aborted", err)
	}

	// SIGSTOP of the leader: the first primary, back as a standby, takes over; the paused one,
	// resumed, is refused and exits.
	a2 := startContender(t, "mindroom-primary (a, restarted)", bin, url, stateA, grpcA)
	a2.waitLog(t, "primary standing by", 1)
	if err := b.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	a2.waitLog(t, "primary serving", 1)
	t.Logf("takeover after SIGSTOP of the leader: %v", time.Since(paused))
	w.waitLog(t, "connected to primary", 3)
	if err := b.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	select {
	case <-b.exited:
		t.Logf("the paused leader exited %v after it was resumed", time.Since(resumed))
		if code := b.state.ExitCode(); code == 0 {
			t.Errorf("the paused leader exited %d after it lost the lease, want non-zero", code)
		}
	case <-time.After(mpDeadline):
		t.Fatal("the paused leader did not exit after it was resumed")
	}
	b.waitLog(t, "leader lease lost: stopping at once", 1)

	for name, path := range map[string]string{"the worker's job": jobRuns, "the approved command": approvedRuns} {
		if n := lines(t, path); n != 1 {
			t.Errorf("%s ran %d times", name, n)
		}
	}
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cs, err := db.PendingContinuations(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, c := range cs {
		keys[c.IdempotencyKey] = true
	}
	for _, key := range []string{"job:" + strconv.FormatInt(job, 10), "job:" + strconv.FormatInt(approvedJob, 10)} {
		if !keys[key] {
			t.Errorf("no continuation %s (all: %v)", key, keys)
		}
	}
	if n := len(cs); n > 4 {
		raw, _ := json.Marshal(keys)
		t.Errorf("%d continuations, want at most the two jobs', the question's and the approval's: %s", n, raw)
	}
	if code := a2.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("the last leader's exit code %d", code)
	}
}
