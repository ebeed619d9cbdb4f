package interaction_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// waitBound bounds every wait for something the primary does on its own time (a job ending,
// a continuation being saved). Reaching it fails the test; it is never a measurement.
const waitBound = 20 * time.Second

// pollEvery is the pause between two looks at the store while waiting.
const pollEvery = 20 * time.Millisecond

// The conversation every test response is in, unless a test names another thread.
const (
	channel = "!room:example.org"
	agent   = "tester"
)

// Operators the tests create: "ada" is an admin, "mia" a member. A response whose requester
// is "ada" has an admin author.
const (
	adminAuthor  = "ada"
	memberAuthor = "mia"
	// stranger is a requester who is no operator at all.
	stranger = "@alice:example.org"
)

// start starts a primary whose background jobs are all stopped, and waited for, before it
// stops: no test leaves a process behind. Its shells do not inherit HOME: a job runs
// `bash -lc`, and a login shell with the host user's HOME runs that user's profile, which
// may be slow or print anything; the tests must not depend on it. Its fast-call budget is
// off, so `--timeout 0` answers every call at admission: a test that decides a prompt the
// instant it is posted would otherwise race the budget and see the call settled (exit 0).
func start(t testing.TB, opts ...testenv.Option) *testenv.Env {
	t.Helper()
	opts = append([]testenv.Option{testenv.WithConfig(func(c *primary.Config) {
		c.Shells.EnvAllow = []string{"LANG"}
		c.Responses.FastCallBudget = -1
	})}, opts...)
	env := testenv.Start(t, opts...)
	stopJobsAtCleanup(t, env)
	return env
}

// stopJobsAtCleanup registers a cleanup that cancels every running job of env and waits until
// none runs. Cleanups run last-registered first, so call it again after starting a worker
// whose jobs must stop before the worker does.
func stopJobsAtCleanup(t testing.TB, env *testenv.Env) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		deadline := time.Now().Add(waitBound)
		for {
			running, err := env.Primary.Internals().Jobs.List(ctx, store.JobRunning)
			if err != nil {
				t.Errorf("list running jobs: %v", err)
				return
			}
			if len(running) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d jobs still run %v after they were cancelled", len(running), waitBound)
				return
			}
			for _, j := range running {
				if err := env.Primary.Internals().Jobs.Cancel(ctx, j.ID); err != nil && !errors.Is(err, jobs.ErrNotRunning) {
					t.Logf("cancel job %d: %v", j.ID, err)
				}
			}
			time.Sleep(pollEvery)
		}
	})
}

// openAs opens a primary-local response of agent "tester" for requester in thread of the
// test channel.
func openAs(t testing.TB, env *testenv.Env, requester, thread string, edit ...func(*responsev1.OpenResponseRequest)) string {
	t.Helper()
	return env.Open(t, append([]func(*responsev1.OpenResponseRequest){func(r *responsev1.OpenResponseRequest) {
		r.RequesterId = requester
		r.Conversation = &conversationv1.Conversation{Channel: channel, Thread: thread}
	}}, edit...)...)
}

// openAdmin opens a foreground response for the admin author that the runtime vouches for
// (requester_trusted): the turn an admin conversation starts commands at once for.
func openAdmin(t testing.TB, env *testenv.Env, thread string, edit ...func(*responsev1.OpenResponseRequest)) string {
	t.Helper()
	return openAs(t, env, adminAuthor, thread, append([]func(*responsev1.OpenResponseRequest){func(r *responsev1.OpenResponseRequest) {
		r.Flags = append(r.Flags, response.FlagRequesterTrusted)
	}}, edit...)...)
}

func setMode(t testing.TB, env *testenv.Env, thread string, mode store.Mode) {
	t.Helper()
	if _, err := env.Primary.Internals().Store.SetConversationMode(context.Background(), channel, thread, mode, "test"); err != nil {
		t.Fatalf("set mode %s of %s: %v", mode, thread, err)
	}
}

// addOperator creates an operator and returns its credential.
func addOperator(t testing.TB, env *testenv.Env, name string, role store.OperatorRole) string {
	t.Helper()
	token, err := operators.Add(context.Background(), env.Primary.Internals().Store, name, role)
	if err != nil {
		t.Fatalf("add operator %s: %v", name, err)
	}
	return token
}

// addAuthors creates the admin "ada" and the member "mia".
func addAuthors(t testing.TB, env *testenv.Env) {
	t.Helper()
	addOperator(t, env, adminAuthor, store.RoleAdmin)
	addOperator(t, env, memberAuthor, store.RoleMember)
}

// firstAdminToken is the credential the primary wrote for its first admin ("admin").
func firstAdminToken(t testing.TB, env *testenv.Env) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.StateDir, "credentials", "operator-admin.token"))
	if err != nil {
		t.Fatalf("first admin credential: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// operatorClient is an OperatorService client over the primary's gRPC listener that sends
// token as its bearer credential.
func operatorClient(t testing.TB, env *testenv.Env, token string) operatorv1.OperatorServiceClient {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///primary",
		grpc.WithContextDialer(env.DialPrimary),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), method, req, reply, cc, opts...)
		}),
		grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), desc, cc, method, opts...)
		}))
	if err != nil {
		t.Fatalf("dial operator API: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return operatorv1.NewOperatorServiceClient(conn)
}

var bashSeq atomic.Int64

// callResult is one `mindroom-agent tools call` as the command that ran it saw it.
type callResult struct {
	code           int
	stdout, stderr string
	// status and outcome are the receipt's, when stdout is a receipt.
	status  string
	outcome any
	// errMsg is the client's {"error":…}, when stdout is one.
	errMsg string
}

func (r callResult) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
}

// callTool runs `mindroom-agent tools call <function> '<args>'` in a real Bash command of the
// response and returns what the client printed and its exit code.
func callTool(t testing.TB, env *testenv.Env, responseID, function, args string) callResult {
	t.Helper()
	cmd := "mindroom-agent tools call " + function + " " + bashQuote(args)
	run := env.RunBash(t, responseID, fmt.Sprintf("bash-%d", bashSeq.Add(1)), cmd)
	r := callResult{code: int(run.Result.GetExitCode()), stdout: run.Stdout, stderr: run.Stderr}
	var obj map[string]any
	d := json.NewDecoder(strings.NewReader(run.Stdout))
	d.UseNumber()
	if err := d.Decode(&obj); err == nil {
		r.status, _ = obj["status"].(string)
		r.outcome = obj["outcome"]
		r.errMsg, _ = obj["error"].(string)
	}
	return r
}

// bashQuote quotes s as one Bash word.
func bashQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// jsonArgs encodes a call's arguments.
func jsonArgs(t testing.TB, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

// refused checks a call the tool refused: exit 1, a failed receipt whose outcome contains
// every fragment. It returns the outcome.
func refused(t testing.TB, r callResult, fragments ...string) string {
	t.Helper()
	msg, _ := r.outcome.(string)
	if r.code != 1 || r.status != "failed" {
		t.Errorf("want a failed call (exit 1); got %s", r)
	}
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("refusal %q does not contain %q", msg, f)
		}
	}
	return msg
}

// accepted checks a completed call (exit 0) and returns its outcome object.
func accepted(t testing.TB, r callResult) map[string]any {
	t.Helper()
	out, ok := r.outcome.(map[string]any)
	if r.code != 0 || r.status != "completed" || !ok {
		t.Fatalf("want a completed call (exit 0) with an object outcome; got %s", r)
	}
	return out
}

// idOf reads a positive id field of an outcome object.
func idOf(t testing.TB, out map[string]any, field string) int64 {
	t.Helper()
	n, ok := out[field].(json.Number)
	if !ok {
		t.Fatalf("outcome %v has no number %s", out, field)
	}
	id, err := n.Int64()
	if err != nil || id <= 0 {
		t.Fatalf("outcome %v: %s = %s is not a positive id", out, field, n)
	}
	return id
}

// startedJob checks a started acknowledgement and returns its job id.
func startedJob(t testing.TB, r callResult) int64 {
	t.Helper()
	out := accepted(t, r)
	if out["status"] != "started" {
		t.Fatalf("want status started; got %v", out)
	}
	if msg, _ := out["message"].(string); !strings.Contains(msg, "do not poll") || !strings.Contains(msg, "End your turn") {
		t.Errorf("acknowledgement %q does not tell the agent to end its turn and not poll", msg)
	}
	return idOf(t, out, "job_id")
}

// pendingApproval checks a pending-approval acknowledgement and returns the approval id and
// the message.
func pendingApproval(t testing.TB, r callResult) (int64, string) {
	t.Helper()
	out := accepted(t, r)
	if out["status"] != "pending_approval" {
		t.Fatalf("want status pending_approval; got %v", out)
	}
	msg, _ := out["message"].(string)
	if !strings.Contains(msg, "do not poll") || !strings.Contains(msg, "End your turn") {
		t.Errorf("acknowledgement %q does not tell the agent to end its turn and not poll", msg)
	}
	return idOf(t, out, "approval_id"), msg
}

// pendingContinuations returns every unacknowledged continuation (the tests never
// acknowledge any).
func pendingContinuations(t testing.TB, env *testenv.Env) []store.Continuation {
	t.Helper()
	var all []store.Continuation
	var after int64
	for {
		page, err := env.Primary.Internals().Store.PendingContinuations(context.Background(), after, 500)
		if err != nil {
			t.Fatalf("pending continuations: %v", err)
		}
		all = append(all, page...)
		if len(page) < 500 {
			return all
		}
		after = page[len(page)-1].ID
	}
}

func continuationsWithKey(t testing.TB, env *testenv.Env, key string) []store.Continuation {
	t.Helper()
	var out []store.Continuation
	for _, c := range pendingContinuations(t, env) {
		if c.IdempotencyKey == key {
			out = append(out, c)
		}
	}
	return out
}

// waitContinuation waits for the continuation with the idempotency key.
func waitContinuation(t testing.TB, env *testenv.Env, key string) store.Continuation {
	t.Helper()
	return waitContinuationMatching(t, env, key, func(k string) bool { return k == key })
}

// waitContinuationMatching waits for the first continuation whose idempotency key matches.
func waitContinuationMatching(t testing.TB, env *testenv.Env, key string, match func(string) bool) store.Continuation {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		for _, c := range pendingContinuations(t, env) {
			if match(c.IdempotencyKey) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no continuation %q within %v", key, waitBound)
		}
		time.Sleep(pollEvery)
	}
}

func jobKey(id int64) string { return fmt.Sprintf("job:%d", id) }

// waitJob waits until the job is finished and returns it.
func waitJob(t testing.TB, env *testenv.Env, id int64) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		j, err := env.Primary.Internals().Jobs.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("job %d: %v", id, err)
		}
		if j.Status == store.JobFinished {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d still runs after %v", id, waitBound)
		}
		time.Sleep(pollEvery)
	}
}

// jobsIn lists the jobs (any status) of a thread of the test channel.
func jobsIn(t testing.TB, env *testenv.Env, thread string) []jobs.Job {
	t.Helper()
	all, err := env.Primary.Internals().Jobs.List(context.Background(), "")
	if err != nil {
		t.Fatalf("list jobs: %v", err)
	}
	var out []jobs.Job
	for _, j := range all {
		if j.Channel == channel && j.Thread == thread {
			out = append(out, j)
		}
	}
	return out
}

// approvalsIn lists the approvals (any status) of a thread of the test channel.
func approvalsIn(t testing.TB, env *testenv.Env, thread string) []store.Approval {
	t.Helper()
	list, err := env.Primary.Internals().Store.ListApprovals(context.Background(), store.ApprovalFilter{Channel: channel, Thread: thread, Limit: 1000})
	if err != nil {
		t.Fatalf("list approvals: %v", err)
	}
	return list
}

// workspace is the agent's workspace on the primary's host.
func workspace(t testing.TB, env *testenv.Env) string {
	t.Helper()
	dir, err := env.Primary.Internals().Shells.Workspace(agent)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
