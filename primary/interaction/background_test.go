package interaction_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
)

// TestRunInBackgroundValidation drives run_in_background's argument rules through the real
// CLI in a real shell. The conversation is in auto mode, so an accepted command is saved as
// an approval and nothing runs; a refused one saves nothing.
func TestRunInBackgroundValidation(t *testing.T) {
	env := start(t)
	const thread = "$validation"
	setMode(t, env, thread, store.ModeAuto)
	id := openAs(t, env, stranger, thread)

	// savedApproval checks that the last call added exactly one approval and returns it.
	seen := 0
	savedApproval := func(t *testing.T) store.Approval {
		t.Helper()
		list := approvalsIn(t, env, thread)
		if len(list) != seen+1 {
			t.Fatalf("approvals = %d, want %d", len(list), seen+1)
		}
		seen = len(list)
		return list[0] // newest first
	}
	nothingSaved := func(t *testing.T) {
		t.Helper()
		if n := len(approvalsIn(t, env, thread)); n != seen {
			t.Errorf("a refused call saved an approval: %d, want %d", n, seen)
		}
	}
	call := func(t *testing.T, args any) callResult {
		t.Helper()
		return callTool(t, env, id, "interaction.run_in_background", jsonArgs(t, args))
	}

	t.Run("CommandOf2000CharactersIsAcceptedWithoutItsSurroundingWhitespace", func(t *testing.T) {
		cmd := "echo " + strings.Repeat("x", 1995)
		pendingApproval(t, call(t, map[string]any{"command": " \n\t" + cmd + " \n "}))
		if ap := savedApproval(t); ap.Command != cmd {
			t.Errorf("saved command is %d characters, want the trimmed %d", len([]rune(ap.Command)), len(cmd))
		}
	})
	t.Run("CommandLimitCountsCharactersNotBytes", func(t *testing.T) {
		cmd := "echo " + strings.Repeat("é", 1995) // 2000 characters, 3995 bytes
		pendingApproval(t, call(t, map[string]any{"command": cmd}))
		if ap := savedApproval(t); ap.Command != cmd {
			t.Errorf("saved command differs from the one sent")
		}
	})
	t.Run("CommandOf2001CharactersIsRefusedWithTheScriptFileAdvice", func(t *testing.T) {
		refused(t, call(t, map[string]any{"command": "echo " + strings.Repeat("x", 1996)}),
			"2001 characters", "at most 2000", "script file")
		nothingSaved(t)
	})
	t.Run("EmptyCommandIsRefused", func(t *testing.T) {
		refused(t, call(t, map[string]any{"command": ""}), "command is empty")
		nothingSaved(t)
	})
	t.Run("WhitespaceOnlyCommandIsRefused", func(t *testing.T) {
		refused(t, call(t, map[string]any{"command": " \n\t  "}), "command is empty")
		nothingSaved(t)
	})
	t.Run("LabelOf120CharactersIsAccepted", func(t *testing.T) {
		lbl := strings.Repeat("l", 120)
		pendingApproval(t, call(t, map[string]any{"command": "echo label-120", "label": lbl}))
		if ap := savedApproval(t); ap.Label != lbl {
			t.Errorf("saved label %q, want %q", ap.Label, lbl)
		}
	})
	t.Run("LabelOf121CharactersIsRefused", func(t *testing.T) {
		refused(t, call(t, map[string]any{"command": "echo label-121", "label": strings.Repeat("l", 121)}),
			"label is 121 characters", "at most 120")
		nothingSaved(t)
	})
	t.Run("WrongTypesAndUnknownKeysAreRefusedByTheSchema", func(t *testing.T) {
		for name, args := range map[string]string{
			"NumberCommand":  `{"command":5}`,
			"NullCommand":    `{"command":null}`,
			"ArrayCommand":   `{"command":["echo","x"]}`,
			"NumberLabel":    `{"command":"echo typed","label":7}`,
			"MissingCommand": `{"label":"x"}`,
			"UnknownKey":     `{"command":"echo typed","cwd":"/"}`,
		} {
			t.Run(name, func(t *testing.T) {
				refused(t, callTool(t, env, id, "interaction.run_in_background", args), "Invalid tool arguments")
			})
		}
		nothingSaved(t)
	})
	// A call the client cannot send is exit 2 with {"error","call_id"}: the tool never sees it.
	t.Run("InputThatIsNotAJSONObjectIsExitTwo", func(t *testing.T) {
		for name, args := range map[string]string{"Array": `["echo x"]`, "Malformed": `{"command":`} {
			t.Run(name, func(t *testing.T) {
				r := callTool(t, env, id, "interaction.run_in_background", args)
				if r.code != 2 || r.errMsg == "" || r.status != "" {
					t.Errorf("want exit 2 with an error object; got %s", r)
				}
				if !strings.Contains(r.stdout, `"call_id"`) {
					t.Errorf("error output does not name the call id: %s", r.stdout)
				}
			})
		}
		nothingSaved(t)
	})
}

// TestModeGates checks who may run background commands in which conversation mode.
func TestModeGates(t *testing.T) {
	env := start(t)
	addAuthors(t, env)

	t.Run("AskRefusesAndNamesBothWaysToEnable", func(t *testing.T) {
		const thread = "$ask"
		id := openAdmin(t, env, thread) // an admin author changes nothing in ask mode
		msg := refused(t, callTool(t, env, id, "interaction.run_in_background", `{"command":"echo no"}`), "mode is ask")
		for _, way := range []string{"mode to auto", "to admin"} {
			if !strings.Contains(msg, way) {
				t.Errorf("refusal %q does not name the way %q", msg, way)
			}
		}
		if n, m := len(jobsIn(t, env, thread)), len(approvalsIn(t, env, thread)); n != 0 || m != 0 {
			t.Errorf("ask mode recorded %d jobs and %d approvals, want none", n, m)
		}
	})

	t.Run("AdminModeRefusesAuthorsWhoAreNotAdmins", func(t *testing.T) {
		const thread = "$admin-others"
		setMode(t, env, thread, store.ModeAdmin)
		for _, author := range []string{memberAuthor, stranger} {
			id := openAs(t, env, author, thread)
			refused(t, callTool(t, env, id, "interaction.run_in_background", `{"command":"echo no"}`), "admin mode", "is not an admin")
		}
		if n, m := len(jobsIn(t, env, thread)), len(approvalsIn(t, env, thread)); n != 0 || m != 0 {
			t.Errorf("refused calls recorded %d jobs and %d approvals, want none", n, m)
		}
	})

	t.Run("AdminModeStartsAnAdminsCommandInTheWorkspaceWithoutCredentials", func(t *testing.T) {
		const thread = "$admin"
		setMode(t, env, thread, store.ModeAdmin)
		id := openAdmin(t, env, thread)
		jobID := startedJob(t, callTool(t, env, id, "interaction.run_in_background",
			`{"command":"echo \"cwd=$(pwd)\"; env; echo end-of-env","label":"environment check"}`))
		c := waitContinuation(t, env, jobKey(jobID))
		j := waitJob(t, env, jobID)

		ws := workspace(t, env)
		if j.Kind != "command" || j.Author != adminAuthor || j.Workspace != ws || j.Label != "environment check" || j.WorkerKey != "" {
			t.Errorf("job record = %+v", j.Job)
		}
		if j.Outcome != "success" || j.ExitCode == nil || *j.ExitCode != 0 {
			t.Errorf("outcome %q exit %v, want success 0", j.Outcome, j.ExitCode)
		}
		raw, err := os.ReadFile(j.LogPath)
		if err != nil {
			t.Fatalf("job log: %v", err)
		}
		log := string(raw)
		if !strings.Contains(log, "\ncwd="+ws+"\n") && !strings.HasPrefix(log, "cwd="+ws+"\n") {
			t.Errorf("the job did not run in the workspace %q:\n%s", ws, log)
		}
		if !strings.Contains(log, "end-of-env") {
			t.Fatalf("log is incomplete:\n%s", log)
		}
		secrets := map[string]string{
			"runtime credential":      env.Primary.RuntimeToken(),
			"key-a worker credential": testenv.WorkerCredential("key-a"),
			"key-b worker credential": testenv.WorkerCredential("key-b"),
			"first admin credential":  firstAdminToken(t, env),
		}
		for what, v := range secrets {
			if strings.Contains(log, v) {
				t.Errorf("the job's environment holds the %s", what)
			}
		}
		for _, line := range strings.Split(log, "\n") {
			if strings.HasPrefix(line, "MINDROOM_AGENT_CLI_") {
				t.Errorf("the job's environment has the Agent CLI variable %q", line)
			}
		}

		// Exactly one continuation, telling everything the contract lists.
		if cs := continuationsWithKey(t, env, jobKey(jobID)); len(cs) != 1 {
			t.Errorf("continuations of the job = %d, want 1", len(cs))
		}
		if c.Channel != channel || c.Thread != thread || c.Post {
			t.Errorf("continuation goes to %s %s post=%v, want %s %s as a model turn", c.Channel, c.Thread, c.Post, channel, thread)
		}
		for _, want := range []string{
			`"environment check"`, "(job " + itoa(jobID) + ")", "finished: success", "Runtime: ",
			"Last output", "end-of-env", ws,
			"Continue only if this confirms success", "do not re-launch the same job",
		} {
			if !strings.Contains(c.Text, want) {
				t.Errorf("continuation does not contain %q:\n%s", want, c.Text)
			}
		}
		mentions := 0
		for _, other := range pendingContinuations(t, env) {
			if strings.Contains(other.Text, "(job "+itoa(jobID)+")") {
				mentions++
			}
		}
		if mentions != 1 {
			t.Errorf("%d continuations tell about job %d, want 1", mentions, jobID)
		}
	})

	t.Run("AutoModeSavesOneApprovalPerIdenticalRequest", func(t *testing.T) {
		const thread = "$auto"
		setMode(t, env, thread, store.ModeAuto)
		id := openAs(t, env, stranger, thread)
		first, msg := pendingApproval(t, callTool(t, env, id, "interaction.run_in_background", `{"command":"echo approve me","label":"first"}`))
		if !strings.Contains(msg, "Saved approval request") {
			t.Errorf("first acknowledgement %q does not say it was saved", msg)
		}
		list := approvalsIn(t, env, thread)
		if len(list) != 1 {
			t.Fatalf("approvals = %d, want 1", len(list))
		}
		ap := list[0]
		if ap.ID != first || ap.Status != store.ApprovalPending || ap.Command != "echo approve me" || ap.Author != stranger ||
			ap.Kind != "command" || ap.Workdir != "primary: "+workspace(t, env) || ap.Agent != agent {
			t.Errorf("saved approval = %+v", ap)
		}

		// The same command again (another label, other surrounding spaces) is the same card.
		again, msg := pendingApproval(t, callTool(t, env, id, "interaction.run_in_background", `{"command":"  echo approve me\n","label":"again"}`))
		if again != first {
			t.Errorf("identical request got approval %d, want %d", again, first)
		}
		if !strings.Contains(msg, "already waiting") || !strings.Contains(msg, "nothing new was saved") {
			t.Errorf("repeat acknowledgement %q does not say nothing new was saved", msg)
		}
		if n := len(approvalsIn(t, env, thread)); n != 1 {
			t.Errorf("approvals after the repeat = %d, want 1", n)
		}

		other, _ := pendingApproval(t, callTool(t, env, id, "interaction.run_in_background", `{"command":"echo something else"}`))
		if other == first {
			t.Errorf("a different command got the same approval %d", first)
		}
		if n := len(approvalsIn(t, env, thread)); n != 2 {
			t.Errorf("approvals after a different command = %d, want 2", n)
		}
		if n := len(jobsIn(t, env, thread)); n != 0 {
			t.Errorf("auto mode started %d jobs before any approval", n)
		}
	})
}

// TestCaps fills the per-thread and the global caps with jobs that sleep, and checks the next
// job is refused with a clear message. Every job is cancelled before the test returns.
func TestCaps(t *testing.T) {
	env := start(t)
	addAuthors(t, env)
	const sleeper = `{"command":"sleep 60"}`
	threads := []string{"$cap-1", "$cap-2", "$cap-3", "$cap-4", "$cap-5", "$cap-6", "$cap-7", "$cap-8"}
	responses := make(map[string]string, len(threads))
	for _, th := range threads {
		setMode(t, env, th, store.ModeAdmin)
		responses[th] = openAdmin(t, env, th)
	}
	var started []int64
	run := func(t *testing.T, thread string) callResult {
		t.Helper()
		return callTool(t, env, responses[thread], "interaction.run_in_background", sleeper)
	}

	t.Run("ThreeRunPerThreadAndTheFourthIsRefused", func(t *testing.T) {
		for range 3 {
			started = append(started, startedJob(t, run(t, threads[0])))
		}
		refused(t, run(t, threads[0]), "3 background jobs are already running in this conversation", "wait for one to finish")
		if n := len(jobsIn(t, env, threads[0])); n != 3 {
			t.Errorf("jobs in the thread = %d, want 3", n)
		}
	})

	t.Run("TwentyRunInAllAndTheTwentyFirstIsRefused", func(t *testing.T) {
		// 3 run in the first thread; 3 more in each of five threads and 2 in the seventh make 20.
		for _, th := range threads[1:6] {
			for range 3 {
				started = append(started, startedJob(t, run(t, th)))
			}
		}
		for range 2 {
			started = append(started, startedJob(t, run(t, threads[6])))
		}
		if len(started) != 20 {
			t.Fatalf("started %d jobs, want 20", len(started))
		}
		refused(t, run(t, threads[7]), "20 background jobs are already running on this primary", "wait for one to finish")
		refused(t, run(t, threads[6]), "20 background jobs are already running on this primary")
		if n := len(jobsIn(t, env, threads[7])); n != 0 {
			t.Errorf("the refused thread has %d jobs", n)
		}
	})

	t.Run("AFinishedJobFreesItsPlace", func(t *testing.T) {
		if len(started) == 0 {
			t.Skip("no job started")
		}
		if err := env.Primary.Internals().Jobs.Cancel(context.Background(), started[0]); err != nil {
			t.Fatal(err)
		}
		if j := waitJob(t, env, started[0]); j.Outcome != "cancelled on request" {
			t.Errorf("cancelled job's outcome = %q", j.Outcome)
		}
		started = append(started, startedJob(t, run(t, threads[7])))
	})

	// The cleanup of start cancels them too; this checks that cancelling stops every process.
	for _, id := range started {
		if err := env.Primary.Internals().Jobs.Cancel(context.Background(), id); err != nil && !errors.Is(err, jobs.ErrNotRunning) {
			t.Errorf("cancel %d: %v", id, err)
		}
	}
	for _, id := range started {
		if j := waitJob(t, env, id); j.Outcome != "cancelled on request" {
			t.Errorf("job %d: outcome %q, want cancelled on request", id, j.Outcome)
		}
	}
}

// TestCommandCeiling runs commands past a short configured ceiling: SIGTERM at the ceiling,
// SIGKILL after the grace for a command that ignores SIGTERM.
func TestCommandCeiling(t *testing.T) {
	env := start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Jobs.CommandCeiling = 300 * time.Millisecond
		c.Jobs.Grace = 200 * time.Millisecond
	}))
	addAuthors(t, env)
	const thread = "$ceiling"
	setMode(t, env, thread, store.ModeAdmin)
	id := openAdmin(t, env, thread)
	// Whether the command gets as far as its trap before the ceiling depends on the host's
	// speed; either way it must end at the time limit.
	for name, tc := range map[string]struct{ cmd, label string }{
		"StopsAtTheTimeLimit":                 {"sleep 30", "slow"},
		"IgnoringSIGTERMStillStopsAtTheLimit": {"trap '' TERM; sleep 30; sleep 30", "stubborn"},
	} {
		t.Run(name, func(t *testing.T) {
			lbl := tc.label
			jobID := startedJob(t, callTool(t, env, id, "interaction.run_in_background", jsonArgs(t, map[string]any{"command": tc.cmd, "label": lbl})))
			c := waitContinuation(t, env, jobKey(jobID))
			if j := waitJob(t, env, jobID); j.Outcome != "stopped at the time limit" {
				t.Errorf("outcome = %q, want stopped at the time limit", j.Outcome)
			}
			for _, want := range []string{`"` + lbl + `"`, "finished: stopped at the time limit", "do not re-launch"} {
				if !strings.Contains(c.Text, want) {
					t.Errorf("continuation does not contain %q:\n%s", want, c.Text)
				}
			}
		})
	}
}

// TestCleanResponse checks that a clean response neither lists nor reaches the interaction
// toolkit, where an otherwise identical response does.
func TestCleanResponse(t *testing.T) {
	env := start(t, testenv.WithConfig(func(c *primary.Config) { c.Interaction.AgentEngine = "test" }))
	addAuthors(t, env)
	const thread = "$clean"
	setMode(t, env, thread, store.ModeAdmin)
	clean := openAdmin(t, env, thread, func(r *responsev1.OpenResponseRequest) { r.Flags = []string{"clean"} })
	normal := openAdmin(t, env, thread)

	listsInteraction := func(id string) bool {
		run := env.RunBash(t, id, "list-"+itoa(bashSeq.Add(1)), "mindroom-agent tools list --limit 1000")
		if run.Result.GetExitCode() != 0 {
			t.Fatalf("tools list: exit %d %s %s", run.Result.GetExitCode(), run.Stdout, run.Stderr)
		}
		return strings.Contains(run.Stdout, `"toolkit":"interaction"`)
	}
	if !listsInteraction(normal) {
		t.Fatal("a response without the clean flag does not list the interaction toolkit")
	}
	if listsInteraction(clean) {
		t.Error("a clean response lists the interaction toolkit")
	}
	run := env.RunBash(t, clean, "search", "mindroom-agent tools search run_in_background")
	if run.Result.GetExitCode() != 0 || strings.Contains(run.Stdout, "interaction") {
		t.Errorf("search in a clean response: exit %d, %s", run.Result.GetExitCode(), run.Stdout)
	}
	run = env.RunBash(t, clean, "describe", "mindroom-agent tools describe interaction.run_in_background")
	if run.Result.GetExitCode() != 2 {
		t.Errorf("describe in a clean response: exit %d, want 2; %s", run.Result.GetExitCode(), run.Stdout)
	}
	// The call is admitted and fails like a call of any toolkit the response does not have.
	for _, c := range []struct{ function, args string }{
		{"interaction.run_in_background", `{"command":"echo from-clean"}`},
		{"interaction.run_agent_in_background", `{"task":"say from-clean"}`},
	} {
		msg := refused(t, callTool(t, env, clean, c.function, c.args), `Unknown toolkit "interaction"`)
		if strings.Contains(msg, "interaction;") || strings.Contains(msg, "interaction,") {
			t.Errorf("the refusal lists the interaction toolkit as available: %q", msg)
		}
	}
	if n := len(jobsIn(t, env, thread)); n != 0 {
		t.Errorf("a clean response started %d jobs", n)
	}
}
