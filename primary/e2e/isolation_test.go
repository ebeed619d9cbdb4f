package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/keyring"
	"github.com/turncli/turncli/internal/sandbox"
)

// isolationRig is a primary and a worker started as root, their state directories under a 0700
// directory, as a clone in root's home would have them.
type isolationRig struct {
	*restartRig
	primaryState, workerState string
	restURL                   string
}

func startIsolationRig(t *testing.T, extra ...string) isolationRig {
	t.Helper()
	requireRootBinaries(t, "agents get users of their own only when the primary runs as root")
	if s := sandbox.Detect(); !s.Namespaces {
		t.Skipf("no sandboxes here: %s", s.Reason)
	}
	bin := mpBuild(t)
	home := t.TempDir() // 0700
	primaryState, workerState := filepath.Join(home, "primary"), filepath.Join(home, "worker")
	args := append([]string{"--state-dir", primaryState, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
		"--agent-cli-listen", "127.0.0.1:0", "--worker-keys", "w", "--enable-test-toolkit", "--isolation", "required"}, extra...)
	rig, ep := connectRig(t, mpStart(t, "mindroom-primary", filepath.Join(bin, "mindroom-primary"), mpBaseEnv(t), args...), primaryState)
	credential, err := os.ReadFile(ep.WorkerTokenFiles["w"])
	if err != nil {
		t.Fatal(err)
	}
	worker := mpStart(t, "mindroom-worker", filepath.Join(bin, "mindroom-worker"),
		mpBaseEnv(t, "MINDROOM_WORKER_CREDENTIAL="+strings.TrimSpace(string(credential))),
		append([]string{"--primary", ep.GRPC, "--key", "w", "--id", "w1", "--state-dir", workerState, "--isolation", "required"}, extra...)...)
	worker.waitLog(t, "connected to primary", 1)
	return isolationRig{restartRig: rig, primaryState: primaryState, workerState: workerState, restURL: ep.HTTP}
}

// open opens a response of agent on the worker of key (the primary when empty), in a thread of
// the agent's own.
func (r isolationRig) open(t *testing.T, agent, key string, minimal bool) string {
	t.Helper()
	return r.openIn(t, agent, key, "$"+agent+key, minimal)
}

// openIn opens a response of agent on the worker of key in a conversation thread.
func (r isolationRig) openIn(t *testing.T, agent, key, thread string, minimal bool) string {
	t.Helper()
	ctx, cancel := bearerCtx(r.runtime)
	defer cancel()
	req := &responsev1.OpenResponseRequest{
		AgentName: agent, RequesterId: "admin", WorkerKey: key, Flags: []string{"requester_trusted"},
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: thread},
	}
	if minimal {
		req.ShellMode = responsev1.ShellMode_SHELL_MODE_MINIMAL
	}
	resp, err := r.api.OpenResponse(ctx, req)
	if err != nil {
		t.Fatalf("OpenResponse: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := bearerCtx(r.runtime)
		defer cancel()
		_, _ = r.api.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
	})
	return resp.GetResponseId()
}

func (r isolationRig) bash(t *testing.T, response, callID, command string) mpBash {
	t.Helper()
	ctx, cancel := bearerCtx(r.runtime)
	defer cancel()
	out, err := mpRunBash(ctx, r.api, response, callID, command, nil)
	if err != nil {
		t.Fatalf("RunBash %s: %v", callID, err)
	}
	return out
}

// job runs command as an approved background job of agent and returns its finished record.
func (r isolationRig) job(t *testing.T, agent, key, command string) *operatorv1.Job {
	t.Helper()
	r.setMode(t, "$"+agent+key, operatorv1.Mode_MODE_ADMIN) // started at once
	resp := r.open(t, agent, key, true)
	args, _ := json.Marshal(map[string]string{"command": command, "label": agent})
	out := r.bash(t, resp, "ask-"+agent, "mindroom-agent tools call interaction.run_in_background "+bashQuote(string(args)))
	m := regexp.MustCompile(`"job_id":(\d+)`).FindStringSubmatch(out.stdout)
	if m == nil {
		t.Fatalf("run_in_background: %q %q", out.stdout, out.stderr)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return r.awaitJob(t, id, "finished", finished)
}

// hostPidOf finds the host's pid of the one process whose command line holds marker.
func hostPidOf(t *testing.T, marker string, ended <-chan mpBash) int {
	t.Helper()
	deadline := time.Now().Add(mpDeadline)
	for time.Now().Before(deadline) {
		select {
		case out := <-ended:
			t.Fatalf("the command ended: %v %q %q", out.result, out.stdout, out.stderr)
		default:
		}
		out, _ := exec.Command("pgrep", "-fx", marker).Output()
		if f := strings.Fields(string(out)); len(f) == 1 {
			pid, _ := strconv.Atoi(f[0])
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no process runs %q", marker)
	return 0
}

func TestATurnCannotReachAnotherTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	// The primary and the worker are started from this thread, with a session keyring of its
	// own, which no command may hold.
	runtime.LockOSThread() // never unlocked: the thread ends with the test
	if err := keyring.JoinNew(); err != nil {
		t.Fatal(err)
	}
	ours, keyErr := keyring.SessionID()
	rig := startIsolationRig(t)
	for _, loc := range []struct{ name, key, state, marker string }{
		{"Primary", "", rig.primaryState, "31337"}, {"Worker", "w", rig.workerState, "31338"},
	} {
		t.Run(loc.name, func(t *testing.T) {
			victim := rig.open(t, "victim"+loc.key, loc.key, false)
			marker := loc.marker
			running := make(chan mpBash, 1)
			go func() {
				ctx, cancel := bearerCtx(rig.runtime)
				defer cancel()
				out, _ := mpRunBash(ctx, rig.api, victim, "victim-bash", "echo mine > /tmp/victim-tmp; echo mine > victim-file; exec sleep "+marker, nil)
				running <- out
			}()
			pid := hostPidOf(t, "sleep "+marker, running)
			wsRoot := filepath.Join(loc.state, "workspaces")
			victimWS := filepath.Join(wsRoot, "victim"+loc.key)
			if _, err := os.Stat(filepath.Join(victimWS, "victim-file")); err != nil {
				t.Fatalf("the victim's file: %v", err)
			}
			attacker := rig.open(t, "attacker"+loc.key, loc.key, false)
			probe := fmt.Sprintf(`
echo "procs=$(ls -d /proc/[0-9]* | wc -l)"
echo "environ=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c 'WINDOW=victim-bash')"
echo "sleeper=$(pgrep -fx 'sleep %[1]s' | wc -l)"
kill -0 %[2]d 2>/dev/null && echo signal=yes || echo signal=no
echo "absolute=$(cat %[3]s/victim-file 2>&1 | grep -c mine)"
echo "relative=$(cat ../victim%[4]s/victim-file 2>&1 | grep -c mine)"
echo "write=$( (echo x > %[3]s/planted) 2>/dev/null && echo yes || echo no)"
echo "list=$(ls %[5]s | tr '\n' ' ')"
echo "tmp=$(cat /tmp/victim-tmp 2>/dev/null | grep -c mine)"
echo "state=$(ls -A %[6]s | tr '\n' ' ')"
echo x > /dev/stderr
echo "uid=$(id -u)"
echo "keyring=$(grep -c '^%08[7]x ' /proc/keys)"
echo "ownkeyring=$(grep -c ' _ses: ' /proc/keys)"
`, marker, pid, victimWS, loc.key, wsRoot, loc.state, ours)
			out := rig.bash(t, attacker, "attack", probe)
			got := map[string]string{}
			for _, line := range strings.Split(out.stdout, "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					got[k] = strings.TrimSpace(v)
				}
			}
			want := map[string]string{
				"environ": "0", "sleeper": "0", "signal": "no", "absolute": "0", "relative": "0", "write": "no",
				"list": "attacker" + loc.key, "tmp": "0", "state": "agent_cli_bin workspaces",
			}
			if keyErr == nil { // it holds its own session keyring, and sees not the primary's
				want["keyring"], want["ownkeyring"] = "0", "1"
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q\nstdout:\n%s\nstderr:\n%s", k, got[k], v, out.stdout, out.stderr)
				}
			}
			if n, _ := strconv.Atoi(got["procs"]); n == 0 || n > 8 {
				t.Errorf("the attacker sees %s processes; only its own should be listed", got["procs"])
			}
			if uid, _ := strconv.Atoi(got["uid"]); uid < sandbox.DefaultFirstID {
				t.Errorf("the attacker runs as uid %d, not an agent's own", uid)
			}
			if out.stderr != "x\n" {
				t.Errorf("echo x > /dev/stderr gave stderr %q", out.stderr)
			}
			if _, err := os.Stat(filepath.Join(victimWS, "planted")); err == nil {
				t.Error("the attacker planted a file in the victim's workspace")
			}
			// The attacker's own profile runs in its own login shells only.
			rig.bash(t, attacker, "plant", "echo 'echo PLANTED' > .profile")
			// A job's working directory is its workspace in its own view: relative paths write
			// there and reach nothing else.
			keys := fmt.Sprintf("grep -c '^%08x ' /proc/keys; ", ours)
			if j := rig.job(t, "victim"+loc.key, loc.key, keys+"echo victim-job; echo x > /dev/stderr; touch rel && ls .. && cat ../attacker"+loc.key+"/.profile"); strings.Contains(j.GetTail(), "PLANTED") ||
				!strings.Contains(j.GetTail(), "victim-job\nx\nvictim"+loc.key+"\n") || j.GetOutcome() == "success" ||
				(keyErr == nil && !strings.HasPrefix(j.GetTail(), "0\nvictim-job")) {
				t.Errorf("the victim's job (it must not see the primary's session keyring): %q %q", j.GetOutcome(), j.GetTail())
			}
			_ = syscall.Kill(pid, syscall.SIGKILL) // the victim's command ends
			<-running
		})
	}
}

// TestARootPrimaryWithItsStateInAPrivateHomeRunsEveryKindOfShell is the first hour of a root
// user whose clone sits in a 0700 home: a REST Bash command, a mindroom-agent tools call, a
// shell.run_shell_command and an approved background job all run, on the primary and on a
// worker, and reopening /dev/stderr works in each.
func TestARootPrimaryWithItsStateInAPrivateHomeRunsEveryKindOfShell(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	rig := startIsolationRig(t)
	for _, loc := range []struct{ name, key string }{{"Primary", ""}, {"Worker", "w"}} {
		t.Run(loc.name, func(t *testing.T) {
			resp := rig.open(t, "first-hour"+loc.key, loc.key, false)
			if out := rig.bash(t, resp, "plain", "echo out; echo err > /dev/stderr; tee /dev/stderr <<<teed >/dev/null"); out.stdout != "out\n" ||
				out.stderr != "err\nteed\n" || out.result.GetExitCode() != 0 {
				t.Fatalf("a Bash command: %v %q %q", out.result, out.stdout, out.stderr)
			}
			if out := rig.bash(t, resp, "call", `mindroom-agent tools call test.echo '{"hello":"world"}'`); !strings.Contains(out.stdout, `"outcome":{"hello":"world"}`) {
				t.Fatalf("a tools call: %v %q %q", out.result, out.stdout, out.stderr)
			}
			// The minimal mode offers the shell toolkit and background work; a job in a conversation
			// of the auto mode waits for an approval.
			thread := "$approved" + loc.key
			rig.setMode(t, thread, operatorv1.Mode_MODE_AUTO) // each command waits for an admin's approval
			minimal := rig.openIn(t, "first-hour"+loc.key, loc.key, thread, true)
			args, _ := json.Marshal(map[string]any{"command": "echo nested; echo nested-err > /dev/stderr", "wait_seconds": 30})
			out := rig.bash(t, minimal, "nested", "mindroom-agent tools call shell.run_shell_command "+bashQuote(string(args)))
			if !strings.Contains(out.stdout, "nested") || !strings.Contains(out.stdout, "nested-err") || !strings.Contains(out.stdout, `"status":"completed"`) {
				t.Fatalf("shell.run_shell_command: %v %q %q", out.result, out.stdout, out.stderr)
			}
			jargs, _ := json.Marshal(map[string]string{"command": "echo job; echo job-err > /dev/stderr", "label": "approved"})
			out = rig.bash(t, minimal, "ask", "mindroom-agent tools call interaction.run_in_background "+bashQuote(string(jargs)))
			m := regexp.MustCompile(`"approval_id":(\d+)`).FindStringSubmatch(out.stdout)
			if m == nil {
				t.Fatalf("run_in_background: %q %q", out.stdout, out.stderr)
			}
			approval, _ := strconv.ParseInt(m[1], 10, 64)
			ctx, cancel := bearerCtx(rig.admin)
			defer cancel()
			decided, err := rig.operator.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: uint64(approval), Decision: operatorv1.Decision_DECISION_APPROVE})
			if err != nil {
				t.Fatalf("DecideApproval: %v", err)
			}
			job := rig.awaitJob(t, int64(decided.GetApproval().GetJobId()), "finished", finished)
			if job.GetOutcome() != "success" || !strings.Contains(job.GetTail(), "job\njob-err") {
				t.Fatalf("the approved job: %q %q", job.GetOutcome(), job.GetTail())
			}
		})
	}
}

// TestTheWalkthroughsShellRunsAsTheAgentsCommandsDo: `mindroom-primary shell` on an isolated
// primary runs the person's Bash as the agent's user, in its workspace, in a sandbox with the
// same view as the agent's commands.
func TestTheWalkthroughsShellRunsAsTheAgentsCommandsDo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	rig := startIsolationRig(t)
	sh := startInteractiveShell(t, mpBuild(t), rig.primaryState, "--agent", "walker")
	sh.waitText(t, "in a sandbox as the agent's commands do", 1)
	ws := filepath.Join(rig.primaryState, "workspaces", "walker")
	sh.write(t, fmt.Sprintf("echo uid=$(id -u); echo pwd=$(pwd); echo state=$(ls -A %s | tr '\\n' ' '); echo procs=$(ls -d /proc/[0-9]* | wc -l); mindroom-agent tools call test.echo '{\"a\":1}'; exit\n", rig.primaryState))
	if code := sh.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	out := sh.stdout.String()
	for _, want := range []string{"pwd=" + ws + "\n", "state=agent_cli_bin workspaces\n", `"outcome":{"a":1}`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`uid=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no uid in %q", out)
	}
	if uid, _ := strconv.Atoi(m[1]); uid < sandbox.DefaultFirstID {
		t.Errorf("the shell runs as uid %d, not the agent's", uid)
	}
}
