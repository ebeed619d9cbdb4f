package interaction_test

import (
	"context"
	"strings"
	"testing"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/worker"
)

// TestWorkerJobs runs background work of a worker-keyed response: on the worker, reporting
// back through the primary.
func TestWorkerJobs(t *testing.T) {
	env := start(t, withTestEngine())
	addAuthors(t, env)
	// Like the primary's shells, the worker's do not inherit HOME (see start).
	w := env.StartWorker(t, "key-a", "w1", func(c *worker.Config) { c.Shells.EnvAllow = []string{"LANG"} })
	stopJobsAtCleanup(t, env) // before the worker stops

	onWorker := func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" }

	t.Run("ACommandRunsOnTheWorkerAndReportsItsTail", func(t *testing.T) {
		const thread = "$worker"
		setMode(t, env, thread, store.ModeAdmin)
		id := openAdmin(t, env, thread, onWorker)
		jobID := startedJob(t, callTool(t, env, id, "interaction.run_in_background",
			`{"command":"echo \"cwd=$(pwd)\"; env; echo worker-tail-marker","label":"on the worker"}`))
		c := waitContinuation(t, env, jobKey(jobID))
		j := waitJob(t, env, jobID)
		if j.WorkerKey != "key-a" || j.WorkerID != "w1" || j.Outcome != "success" {
			t.Errorf("worker job = %+v", j.Job)
		}
		for _, want := range []string{`"on the worker" (job ` + itoa(jobID) + `) finished: success`, "worker-tail-marker",
			"cwd=" + w.StateDir, "do not re-launch"} {
			if !strings.Contains(c.Text, want) {
				t.Errorf("continuation does not contain %q:\n%s", want, c.Text)
			}
		}
		for what, v := range map[string]string{
			"runtime credential":      env.Primary.RuntimeToken(),
			"key-a worker credential": testenv.WorkerCredential("key-a"),
			"first admin credential":  firstAdminToken(t, env),
		} {
			if strings.Contains(c.Text, v) {
				t.Errorf("the worker job's environment holds the %s", what)
			}
		}
		// A command job gets no Agent CLI at all: no grant, no window, no URL.
		for _, line := range strings.Split(c.Text, "\n") {
			if strings.HasPrefix(line, "MINDROOM_AGENT_CLI_") {
				t.Errorf("the worker job's environment has the Agent CLI variable %q", line)
			}
		}
		if n := len(continuationsWithKey(t, env, jobKey(jobID))); n != 1 {
			t.Errorf("continuations of the job = %d, want 1", n)
		}
	})

	t.Run("AnApprovedCommandRunsOnTheWorker", func(t *testing.T) {
		const thread = "$worker-approval"
		setMode(t, env, thread, store.ModeAuto)
		id := openAs(t, env, stranger, thread, onWorker)
		ap, _ := pendingApproval(t, callTool(t, env, id, "interaction.run_in_background", `{"command":"echo approved-on-worker"}`))
		if a, err := env.Primary.Internals().Store.Approval(context.Background(), ap); err != nil || a.WorkerKey != "key-a" ||
			a.Workdir != "worker key key-a: workspaces/"+agent {
			t.Fatalf("approval = %+v, %v", a, err)
		}
		admin := operatorClient(t, env, firstAdminToken(t, env))
		got, err := admin.DecideApproval(context.Background(), &operatorv1.DecideApprovalRequest{
			ApprovalId: uint64(ap), Decision: operatorv1.Decision_DECISION_APPROVE})
		if err != nil {
			t.Fatal(err)
		}
		jobID := int64(got.GetApproval().GetJobId())
		c := waitContinuation(t, env, jobKey(jobID))
		if j := waitJob(t, env, jobID); j.WorkerID != "w1" || j.Outcome != "success" {
			t.Errorf("approved worker job = %+v", j.Job)
		}
		if !strings.Contains(c.Text, "approved-on-worker") {
			t.Errorf("continuation has not the output:\n%s", c.Text)
		}
	})

	t.Run("AnAgentRunsOnTheWorkerAndItsCallsReachThePrimary", func(t *testing.T) {
		const thread = "$worker-agent"
		parent := openAs(t, env, stranger, thread, onWorker)
		jobID := startAgent(t, env, parent, "say from the worker\ncall test.identity {}", "worker agent")
		c := waitContinuation(t, env, jobKey(jobID))
		if !c.Post || !strings.Contains(c.Text, "from the worker") {
			t.Fatalf("continuation = %+v", c)
		}
		rs := receiptLines(t, c.Text)
		if len(rs) != 1 {
			t.Fatalf("report holds %d receipts, want 1:\n%s", len(rs), c.Text)
		}
		who, _ := rs[0]["outcome"].(map[string]any)
		if rs[0]["status"] != "completed" || who["bash_call_id"] != "background-agent" || who["response_id"] == parent ||
			who["thread"] != thread {
			t.Errorf("identity receipt = %v", rs[0])
		}
		if j := waitJob(t, env, jobID); j.WorkerID != "w1" {
			t.Errorf("agent job ran on %q, want w1", j.WorkerID)
		}
	})
}
