package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// restartRig is one primary process of the restart test and its clients.
type restartRig struct {
	proc     *mpProc
	conn     *grpc.ClientConn
	api      responsev1.ResponseServiceClient
	operator operatorv1.OperatorServiceClient
	runtime  string // runtime credential
	admin    string // the first admin's credential
}

// freeLoopbackAddr returns a loopback address nothing listens on now, so a restarted primary
// can listen where its workers dial.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// startRestartPrimary starts a real primary on state, listening for gRPC on grpcAddr (so a
// restarted one is where its workers dial), with the extra flags, and returns its clients (as
// the runtime and as the first admin) and its endpoints.
func startRestartPrimary(t *testing.T, name, bin, state, grpcAddr string, extra ...string) (*restartRig, primary.Endpoints) {
	t.Helper()
	args := append([]string{"--state-dir", state, "--grpc-listen", grpcAddr, "--http-listen", "127.0.0.1:0",
		"--agent-cli-listen", "127.0.0.1:0", "--log-level", "info"}, extra...)
	return connectRig(t, mpStart(t, name, filepath.Join(bin, "mindroom-primary"), mpBaseEnv(t), args...), state)
}

// connectRig waits until the started primary p serves on state and returns its clients (as the
// runtime and as the first admin) and its endpoints.
func connectRig(t *testing.T, p *mpProc, state string) (*restartRig, primary.Endpoints) {
	t.Helper()
	p.waitLog(t, "primary serving", 1)
	var ep primary.Endpoints
	data, err := os.ReadFile(filepath.Join(state, primary.EndpointsFile))
	if err != nil {
		t.Fatalf("endpoints.json: %v", err)
	}
	if err := json.Unmarshal(data, &ep); err != nil {
		t.Fatalf("endpoints.json: %v", err)
	}
	read := func(path string) string {
		if path == "" {
			return "" // configured, not kept in a file
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("credential file: %v", err)
		}
		return strings.TrimSpace(string(b))
	}
	conn, err := grpc.NewClient(ep.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &restartRig{
		proc: p, conn: conn, api: responsev1.NewResponseServiceClient(conn),
		operator: operatorv1.NewOperatorServiceClient(conn), runtime: read(ep.RuntimeTokenFile),
		admin: read(ep.OperatorTokenFile),
	}, ep
}

func bearerCtx(token string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), mpDeadline)
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), cancel
}

// background asks for a background command in a new response of the conversation thread and
// returns the id the acknowledgement names (a job id, or an approval id).
func (r *restartRig) background(t *testing.T, workerKey, thread, command, idField string) int64 {
	t.Helper()
	id, out, err := r.launchBackground(workerKey, thread, command, idField)
	if err != nil {
		t.Fatalf("run_in_background in %s: %v", thread, err)
	}
	if out.result.GetExitCode() != 0 || id == 0 {
		t.Fatalf("run_in_background in %s: exit %d stdout %q stderr %q", thread, out.result.GetExitCode(), out.stdout, out.stderr)
	}
	return id
}

// launchBackground is background for a primary that may die meanwhile: id is what the
// acknowledgement named (0 when none arrived, even if the call then failed), err why the call
// did not complete.
func (r *restartRig) launchBackground(workerKey, thread, command, idField string) (id int64, out mpBash, err error) {
	ctx, cancel := bearerCtx(r.runtime)
	defer cancel()
	resp, err := r.api.OpenResponse(ctx, &responsev1.OpenResponseRequest{
		AgentName: "tester", RequesterId: "admin", WorkerKey: workerKey,
		// The runtime vouches for the admin: an admin conversation starts their commands at once.
		Flags:        []string{"requester_trusted"},
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: thread},
		// run_in_background starts work that outlives the command: only the minimal mode offers it.
		ShellMode: responsev1.ShellMode_SHELL_MODE_MINIMAL,
	})
	if err != nil {
		return 0, mpBash{}, fmt.Errorf("OpenResponse: %w", err)
	}
	args, _ := json.Marshal(map[string]string{"command": command, "label": thread})
	var seen strings.Builder // the output so far, kept when the stream breaks
	out, err = mpRunBash(ctx, r.api, resp.GetResponseId(), "ask", "mindroom-agent tools call interaction.run_in_background "+bashQuote(string(args)),
		func(b []byte) { seen.Write(b) })
	if m := regexp.MustCompile(`"` + idField + `":(\d+)`).FindStringSubmatch(seen.String()); m != nil {
		id, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if err != nil {
		return id, out, fmt.Errorf("RunBash: %w", err)
	}
	_, _ = r.api.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
	return id, out, nil
}

func (r *restartRig) setMode(t *testing.T, thread string, mode operatorv1.Mode) {
	t.Helper()
	ctx, cancel := bearerCtx(r.admin)
	defer cancel()
	if _, err := r.operator.SetConversationMode(ctx, &operatorv1.SetConversationModeRequest{
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: thread}, Mode: mode,
	}); err != nil {
		t.Fatalf("SetConversationMode: %v", err)
	}
}

// awaitJob polls the job until done says it is where the test needs it.
func (r *restartRig) awaitJob(t *testing.T, id int64, what string, done func(*operatorv1.Job) bool) *operatorv1.Job {
	t.Helper()
	deadline := time.Now().Add(mpDeadline)
	for {
		ctx, cancel := bearerCtx(r.admin)
		resp, err := r.operator.GetJob(ctx, &operatorv1.GetJobRequest{JobId: uint64(id)})
		cancel()
		if err == nil && done(resp.GetJob()) {
			return resp.GetJob()
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: not %s within %v (last: %v, %v)", id, what, mpDeadline, resp.GetJob(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func finished(j *operatorv1.Job) bool {
	return j.GetStatus() == operatorv1.JobStatus_JOB_STATUS_FINISHED
}

func (r *restartRig) approval(t *testing.T, id int64) *operatorv1.Approval {
	t.Helper()
	ctx, cancel := bearerCtx(r.admin)
	defer cancel()
	resp, err := r.operator.GetApproval(ctx, &operatorv1.GetApprovalRequest{ApprovalId: uint64(id)})
	if err != nil {
		t.Fatalf("GetApproval %d: %v", id, err)
	}
	return resp.GetApproval()
}

func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestJobsAndApprovalsSurviveSIGKILLOfThePrimary kills the real primary while one job runs on
// its host and one on a worker, with one approval pending and one caught while starting, then
// starts a new primary on the same state: both jobs finish once with one continuation each,
// the interrupted approval fails without running, and the pending one runs exactly once.
func TestJobsAndApprovalsSurviveSIGKILLOfThePrimary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	bin := mpBuild(t)
	state, work := shellTempDir(t), shellprivtest.BinaryDir(t)
	grpcAddr := freeLoopbackAddr(t)
	first, _ := startRestartPrimary(t, "mindroom-primary (first)", bin, state, grpcAddr, "--worker-keys", "key-a")
	credential, err := os.ReadFile(filepath.Join(state, "credentials", "workers", "key-a.token"))
	if err != nil {
		t.Fatal(err)
	}
	w := mpStart(t, "mindroom-worker", filepath.Join(bin, "mindroom-worker"),
		mpBaseEnv(t, "MINDROOM_WORKER_CREDENTIAL="+strings.TrimSpace(string(credential))),
		"--primary", grpcAddr, "--key", "key-a", "--id", "w1", "--state-dir", shellTempDir(t), "--log-level", "info")
	w.waitLog(t, "connected to primary", 1)

	first.setMode(t, "$local", operatorv1.Mode_MODE_ADMIN)
	first.setMode(t, "$worker", operatorv1.Mode_MODE_ADMIN)
	first.setMode(t, "$approve", operatorv1.Mode_MODE_AUTO)
	job := func(name string) string {
		gate, runs := filepath.Join(work, name+".gate"), filepath.Join(work, name+".runs")
		return "echo started-" + name + "; echo run >> " + runs + "; while [ ! -e " + gate + " ]; do sleep 0.05; done; echo " + name + "-done"
	}
	localJob := first.background(t, "", "$local", job("local"), "job_id")
	workerJob := first.background(t, "key-a", "$worker", job("worker"), "job_id")
	pending := first.background(t, "", "$approve", "echo run >> "+filepath.Join(work, "approved.runs"), "approval_id")
	starting := first.background(t, "", "$approve", "echo run >> "+filepath.Join(work, "starting.runs"), "approval_id")
	for _, id := range []int64{localJob, workerJob} {
		first.awaitJob(t, id, "running with output", func(j *operatorv1.Job) bool { return strings.Contains(j.GetTail(), "started-") })
	}

	if code := first.proc.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("primary exit code %d after SIGKILL", code)
	}
	// A primary killed between approving and recording the job leaves the approval executing.
	db, err := sqlite.Open(context.Background(), filepath.Join(state, sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.BeginApproval(context.Background(), starting, "admin"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	second, _ := startRestartPrimary(t, "mindroom-primary (second)", bin, state, grpcAddr, "--worker-keys", "key-a")
	w.waitLog(t, "connected to primary", 2)
	for _, name := range []string{"local", "worker"} {
		if err := os.WriteFile(filepath.Join(work, name+".gate"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, id := range map[string]int64{"local": localJob, "worker": workerJob} {
		j := second.awaitJob(t, id, "finished", finished)
		if j.GetOutcome() != "success" || !strings.Contains(j.GetTail(), name+"-done") {
			t.Errorf("%s job after the restart: outcome %q tail %q", name, j.GetOutcome(), j.GetTail())
		}
		if n := lines(t, filepath.Join(work, name+".runs")); n != 1 {
			t.Errorf("%s job ran %d times", name, n)
		}
	}

	if ap := second.approval(t, starting); ap.GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_FAILED || ap.GetNote() != store.ApprovalRestartNote {
		t.Errorf("approval caught executing: %v %q", ap.GetStatus(), ap.GetNote())
	}
	if n := lines(t, filepath.Join(work, "starting.runs")); n != 0 {
		t.Errorf("the approval caught executing ran %d times", n)
	}
	decide := func() (*operatorv1.DecideApprovalResponse, error) {
		ctx, cancel := bearerCtx(second.admin)
		defer cancel()
		return second.operator.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: uint64(pending), Decision: operatorv1.Decision_DECISION_APPROVE})
	}
	resp, err := decide()
	if err != nil {
		t.Fatalf("approve the pending approval after the restart: %v", err)
	}
	approvedJob := int64(resp.GetApproval().GetJobId())
	if j := second.awaitJob(t, approvedJob, "finished", finished); j.GetOutcome() != "success" {
		t.Errorf("approved job: %q", j.GetOutcome())
	}
	if _, err := decide(); status.Code(err) != codes.Aborted {
		t.Errorf("replayed approval: %v, want Aborted", err)
	}
	if n := lines(t, filepath.Join(work, "approved.runs")); n != 1 {
		t.Errorf("the approved command ran %d times", n)
	}

	if code := second.proc.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("second primary exit code %d", code)
	}
	db, err = sqlite.Open(context.Background(), filepath.Join(state, sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pendingCs, err := db.PendingContinuations(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range pendingCs {
		count[c.IdempotencyKey]++
	}
	keys := []string{"approval:" + strconv.FormatInt(starting, 10) + ":failed"} // the conversation is told
	for _, id := range []int64{localJob, workerJob, approvedJob} {
		keys = append(keys, "job:"+strconv.FormatInt(id, 10))
	}
	for _, key := range keys {
		if count[key] != 1 {
			t.Errorf("%s has %d continuations, want 1 (all: %v)", key, count[key], count)
		}
	}
}
