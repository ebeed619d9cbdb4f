package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/secretmask"
	"github.com/turncli/turncli/internal/shellpriv"
)

// TestShellsHaveNoPrivilegeBeyondTheirGrant runs the real primary and worker, each started
// with two writable descriptors it never asked for (fd 3, a pipe, and fd 7, a file), and in
// each kind of shell — a Bash command on the primary and on the worker, a background job on
// each — runs a probe of what the shell can reach. A shell's grant is its workspace and
// mindroom-agent; it must hold no capability, be unable to gain one, run as the shell user,
// reach neither process's memory, environment or credentials, and pass on no descriptor but
// stdio to the programs it starts.
//
// When the binaries do not run as root there is no user switch and no bounding set to empty:
// the parts that prove those skip, the rest still runs.
func TestShellsHaveNoPrivilegeBeyondTheirGrant(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	bin := mpBuild(t)
	leak := newInheritedDescriptors(t)
	primaryState, workerState, probes := shellTempDir(t), shellTempDir(t), shellTempDir(t)

	rig, ep := connectRig(t, mpStartInheriting(t, "mindroom-primary", filepath.Join(bin, "mindroom-primary"), mpBaseEnv(t), leak.files,
		"--state-dir", primaryState, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
		"--agent-cli-listen", "127.0.0.1:0", "--worker-keys", "w", "--log-level", "info"), primaryState)
	credential, err := os.ReadFile(ep.WorkerTokenFiles["w"])
	if err != nil {
		t.Fatalf("worker credential: %v", err)
	}
	secrets := map[string]string{
		"the worker credential": strings.TrimSpace(string(credential)), "the runtime credential": rig.runtime, "the admin credential": rig.admin,
	}
	worker := mpStartInheriting(t, "mindroom-worker", filepath.Join(bin, "mindroom-worker"),
		mpBaseEnv(t, "MINDROOM_WORKER_CREDENTIAL="+secrets["the worker credential"]), leak.files,
		"--primary", ep.GRPC, "--key", "w", "--id", "w1", "--state-dir", workerState, "--log-level", "info")
	worker.waitLog(t, "connected to primary", 1)
	leak.requireHeldBy(t, rig.proc, worker)

	targets := probeTargets{
		processes: map[string]int{"primary": rig.proc.cmd.Process.Pid, "worker": worker.cmd.Process.Pid},
		credentials: map[string]string{
			"runtime-token": ep.RuntimeTokenFile, "operator-token": ep.OperatorTokenFile, "worker-token": ep.WorkerTokenFiles["w"],
		},
		states:      map[string]string{"primary-state": primaryState, "worker-state": workerState},
		agentBinary: filepath.Join(bin, "mindroom-agent"),
	}
	for _, sh := range []struct {
		name, workerKey string
		job             bool
		binDir          string
		workspaces      string
	}{
		{"PrimaryBashCommand", "", false, ep.AgentCLIBin, filepath.Join(primaryState, "workspaces")},
		{"WorkerBashCommand", "w", false, filepath.Join(workerState, "agent_cli_bin"), filepath.Join(workerState, "workspaces")},
		{"PrimaryBackgroundJob", "", true, ep.AgentCLIBin, filepath.Join(primaryState, "workspaces")},
		{"WorkerBackgroundJob", "w", true, filepath.Join(workerState, "agent_cli_bin"), filepath.Join(workerState, "workspaces")},
	} {
		t.Run(sh.name, func(t *testing.T) {
			// Written where the shell user may read it, and sourced, so the probe runs in the
			// shell itself (a background command is limited in length; the probe is not).
			script := filepath.Join(probes, sh.name+".sh")
			if err := os.WriteFile(script, []byte(targets.script(t)), 0o644); err != nil {
				t.Fatal(err)
			}
			var output string
			if sh.job {
				thread := "$" + sh.name
				rig.setMode(t, thread, operatorv1.Mode_MODE_ADMIN) // started at once, without an approval
				id := rig.background(t, sh.workerKey, thread, ". "+bashQuote(script), "job_id")
				output = rig.awaitJob(t, id, "finished", finished).GetTail()
			} else {
				output = runProbe(t, rig, sh.workerKey, script)
			}
			got := parseProbe(t, output)

			t.Run("HoldsNoCapabilityAndCannotGainOne", func(t *testing.T) {
				for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
					if v := got["status."+k]; v != "0000000000000000" {
						t.Errorf("%s = %q: the shell holds capabilities, want none", k, v)
					}
				}
				if v := got["status.NoNewPrivs"]; v != "1" {
					t.Errorf("NoNewPrivs = %q: a setuid or file-capability program could raise the shell's privileges", v)
				}
			})
			t.Run("HasAnEmptyBoundingSet", func(t *testing.T) {
				requireRootBinaries(t, "only root (CAP_SETPCAP) can empty the bounding set")
				if v := got["status.CapBnd"]; v != "0000000000000000" {
					t.Errorf("CapBnd = %q: the bounding set still allows capabilities", v)
				}
			})
			t.Run("RunsAsTheShellUser", func(t *testing.T) {
				requireRootBinaries(t, "shells switch to the shell user only when the binaries run as root")
				u := shellpriv.Default()
				// Real, effective, saved and filesystem ids alike.
				wantUID := fmt.Sprintf("%[1]d %[1]d %[1]d %[1]d", u.Uid)
				wantGID := fmt.Sprintf("%[1]d %[1]d %[1]d %[1]d", u.Gid)
				if v := got["status.Uid"]; v != wantUID {
					t.Errorf("Uid = %q, want %q: the shell runs as the primary's or worker's user", v, wantUID)
				}
				if v := got["status.Gid"]; v != wantGID {
					t.Errorf("Gid = %q, want %q: the shell keeps the primary's or worker's group", v, wantGID)
				}
				if v := got["status.Groups"]; v != "" {
					t.Errorf("Groups = %q: the shell keeps supplementary groups", v)
				}
			})
			t.Run("CannotReadThePrimaryOrTheWorker", func(t *testing.T) {
				for name := range targets.processes {
					for _, file := range []string{"environ", "mem"} {
						label := name + "-" + file
						if v := got["open."+label]; v != "denied" {
							t.Errorf("open /proc/<%s pid>/%s: %q, want permission denied: the shell reaches the %s's %s", name, file, v, name, file)
						}
					}
				}
			})
			t.Run("CannotReadTheStateDirectories", func(t *testing.T) {
				requireRootBinaries(t, "without a user switch the shell is the owner of the state directories")
				for label := range targets.credentials {
					if v := got["open."+label]; v != "denied" {
						t.Errorf("open the %s file: %q, want permission denied: the shell can read a credential", label, v)
					}
				}
				checked := 0
				for k, v := range got {
					label, ok := strings.CutPrefix(k, "open.")
					if !ok || !strings.Contains(label, "-state") {
						continue
					}
					checked++
					// A file may have been removed since the probe was written (a finished
					// job's): only opening it would be a leak.
					if v != "denied" && v != "failed: No such file or directory" {
						t.Errorf("open %s: %q, want permission denied: the shell can read the state", label, v)
					}
				}
				// A job writes its output to a log in the state directory, through the
				// descriptor it was given; by name, the log is the state's.
				if v := got["open.own-log"]; sh.job && v != "denied" {
					t.Errorf("open the job's own log by its path: %q, want permission denied: the shell reaches the jobs directory", v)
				}
				if checked < 2 {
					t.Errorf("only %d state directory entries were probed, want at least both directories:\n%s", checked, output)
				}
			})
			t.Run("HasNoCredentialInItsEnvironment", func(t *testing.T) {
				envs := 0
				for k, v := range got {
					name, ok := strings.CutPrefix(k, "env.")
					if !ok {
						continue
					}
					envs++
					if name == "MINDROOM_WORKER_CREDENTIAL" || name == "MINDROOM_RUNTIME_TOKEN" {
						t.Errorf("the shell's environment has %s", name)
					}
					for what, secret := range secrets {
						if secret != "" && strings.Contains(v, secret) {
							t.Errorf("the shell's %s holds %s", name, what)
						}
					}
					// A job's tail is redacted: a live secret in its environment shows as this.
					if name != "MINDROOM_AGENT_CLI_TOKEN" && strings.Contains(v, secretmask.Redacted) {
						t.Errorf("the shell's %s = %q holds a live secret", name, v)
					}
				}
				if envs == 0 {
					t.Errorf("the probe printed no environment:\n%s", output)
				}
			})
			t.Run("PassesOnlyStdioToItsPrograms", func(t *testing.T) {
				if got["child.comm"] != "sleep" {
					t.Fatalf("the probe's child is %q, not sleep: its descriptors were not seen\n%s", got["child.comm"], output)
				}
				var fds []string
				for k, v := range got {
					if fd, ok := strings.CutPrefix(k, "childfd."); ok {
						fds = append(fds, fd)
						if fd != "0" && fd != "1" && fd != "2" {
							t.Errorf("a program the shell starts has fd %s open (%s)%s", fd, v, leak.describe(v))
						}
					}
				}
				if slices.Sort(fds); !slices.Equal(fds, []string{"0", "1", "2"}) {
					t.Errorf("a program the shell starts has fds %v, want exactly 0 1 2", fds)
				}
				for k, v := range got {
					if fd, ok := strings.CutPrefix(k, "shellfd."); ok && leak.describe(v) != "" {
						t.Errorf("the shell itself holds fd %s (%s)%s", fd, v, leak.describe(v))
					}
				}
			})
			t.Run("CanWriteItsWorkspace", func(t *testing.T) {
				if cwd := got["cwd"]; filepath.Dir(cwd) != sh.workspaces {
					t.Errorf("the shell starts in %q, want a workspace under %s", cwd, sh.workspaces)
				}
				if v := got["write.workspace"]; v != "written" {
					t.Errorf("create a file in the workspace: %q, want it written", v)
				}
				if os.Geteuid() == 0 && got["home"] != got["cwd"] {
					t.Errorf("HOME is %q, want the workspace %q: a shell of another user cannot use the binary's home", got["home"], got["cwd"])
				}
			})
			t.Run("CanRunButNotChangeMindroomAgent", func(t *testing.T) {
				launcher := filepath.Join(sh.binDir, "mindroom-agent")
				if got["agent.path"] != launcher || got["path.first"] != sh.binDir {
					t.Errorf("mindroom-agent is %q and PATH starts with %q, want %s first on PATH", got["agent.path"], got["path.first"], launcher)
				}
				if v := got["agent.help"]; v != "0" {
					t.Errorf("mindroom-agent --help exited %q, want 0: the shell cannot run the client", v)
				}
				requireRootBinaries(t, "without a user switch the shell is the owner of agent_cli_bin/")
				for _, label := range []string{"agent-cli-bin", "launcher", "agent-binary"} {
					if v := got["write."+label]; v != "denied" {
						t.Errorf("write %s: %q, want permission denied: the shell can plant or change what mindroom-agent runs", label, v)
					}
				}
			})
		})
	}
}

// requireRootBinaries skips a part of the proof that only holds when the binaries run as root;
// they run as the test's user.
func requireRootBinaries(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("not root: %s", why)
	}
}

// runProbe runs the probe script as a Bash command of a new response (on the worker of
// workerKey, or on the primary when it is empty) and returns its output.
func runProbe(t *testing.T, rig *restartRig, workerKey, script string) string {
	t.Helper()
	ctx, cancel := bearerCtx(rig.runtime)
	defer cancel()
	resp, err := rig.api.OpenResponse(ctx, &responsev1.OpenResponseRequest{
		AgentName: "tester", RequesterId: "@alice:example.org", WorkerKey: workerKey,
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$probe"},
	})
	if err != nil {
		t.Fatalf("OpenResponse: %v", err)
	}
	defer rig.api.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
	out, err := mpRunBash(ctx, rig.api, resp.GetResponseId(), "probe", ". "+bashQuote(script), nil)
	if err != nil {
		t.Fatalf("RunBash: %v", err)
	}
	if out.result.GetExitCode() != 0 || out.result.GetError() != "" {
		t.Fatalf("the probe: %v\nstdout:\n%s\nstderr:\n%s", out.result, out.stdout, out.stderr)
	}
	return out.stdout
}

// parseProbe reads the probe's key=value lines; it fails unless both of the probe's end marks
// are there (a job's tail could have lost its start).
func parseProbe(t *testing.T, output string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, line := range strings.Split(output, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	if got["probe"] != "end" || !strings.Contains(output, "probe=begin\n") {
		t.Fatalf("the probe did not run to its end:\n%s", output)
	}
	return got
}

// probeTargets is what the probe tries to reach.
type probeTargets struct {
	processes   map[string]int    // name → pid, whose environ and mem it opens
	credentials map[string]string // label → credential file
	states      map[string]string // label → state directory, whose entries it opens
	agentBinary string            // the client agent_cli_bin/mindroom-agent runs
}

// script is the probe: it prints key=value lines, between probe=begin and probe=end.
func (p probeTargets) script(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(probePrelude)
	for name, pid := range p.processes {
		fmt.Fprintf(&b, "probe_open %s-environ /proc/%d/environ\n", name, pid)
		fmt.Fprintf(&b, "probe_open %s-mem /proc/%d/mem\n", name, pid)
	}
	for label, path := range p.credentials {
		fmt.Fprintf(&b, "probe_open %s %s\n", label, bashQuote(path))
	}
	for label, dir := range p.states {
		for rel, path := range privateEntries(t, dir) {
			fmt.Fprintf(&b, "probe_open %s %s\n", bashQuote(label+":"+rel), bashQuote(path))
		}
	}
	fmt.Fprintf(&b, "probe_write agent-binary %s\n", bashQuote(p.agentBinary))
	b.WriteString(probeEnd)
	return b.String()
}

// privateEntries lists the state directory and every directory and regular file in it but the
// shells' own part (workspaces/ and agent_cli_bin/), by path relative to dir.
func privateEntries(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() && (rel == "workspaces" || rel == "agent_cli_bin") {
			return fs.SkipDir
		}
		if d.IsDir() || d.Type().IsRegular() { // opening a FIFO or socket would block or fail for other reasons
			out[rel] = path
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	return out
}

// probePrelude prints the shell's status and environment, checks its workspace, the client and
// the descriptors of a program it starts, and defines probe_open and probe_write: each tries to
// open a path (for reading, or for appending, which creates a missing file) and prints
// open.LABEL or write.LABEL as opened/written, denied, or "failed: <reason>".
const probePrelude = `echo probe=begin
while IFS= read -r line; do
	case $line in
	Cap*:* | NoNewPrivs:* | Uid:* | Gid:* | Groups:*)
		v=${line#*:}
		printf 'status.%s=%s\n' "${line%%:*}" "$(echo $v)" ;;
	esac
done </proc/$$/status
while IFS= read -r -d '' kv; do
	printf 'env.%s\n' "${kv//$'\n'/ }"
done </proc/$$/environ

probe_result() { # prefix label error
	case $3 in
	*"Permission denied"*) printf '%s.%s=denied\n' "$1" "$2" ;;
	*) printf '%s.%s=failed: %s\n' "$1" "$2" "${3##*: }" ;;
	esac
}
probe_open() {
	local err
	if err=$( { : <"$2"; } 2>&1 ); then printf 'open.%s=opened\n' "$1"; else probe_result open "$1" "$err"; fi
}
probe_write() {
	local err
	if err=$( { : >>"$2"; } 2>&1 ); then printf 'write.%s=written\n' "$1"; else probe_result write "$1" "$err"; fi
}

echo "cwd=$PWD"
echo "home=$HOME"
if err=$( { echo probe >"./.probe-$$"; } 2>&1 ) && rm -f "./.probe-$$"; then
	echo write.workspace=written
else
	probe_result write workspace "$err"
fi

agent=$(command -v mindroom-agent)
echo "agent.path=$agent"
echo "path.first=${PATH%%:*}"
mindroom-agent --help >/dev/null 2>&1
echo "agent.help=$?"
probe_write launcher "$agent"
probe_write agent-cli-bin "${agent%/*}/planted-by-a-shell"
rm -f "${agent%/*}/planted-by-a-shell" 2>/dev/null

# A program this shell starts: its descriptors are what any command would inherit, once it
# sleeps (between its exec and its sleep, its loader and locale hold files of their own).
sleep 30 &
child=$!
for ((i = 0; i < 500; i++)); do
	[[ $(cat /proc/$child/stat 2>/dev/null) == *"(sleep) S "* ]] && break
	sleep 0.01
done
echo "child.comm=$(cat /proc/$child/comm 2>/dev/null)"
for f in /proc/$child/fd/*; do printf 'childfd.%s=%s\n' "${f##*/}" "$(readlink "$f")"; done
kill $child
wait $child 2>/dev/null
for f in /proc/$$/fd/*; do printf 'shellfd.%s=%s\n' "${f##*/}" "$(readlink "$f")"; done
own=$(readlink /proc/$$/fd/1)
[ "${own#/}" != "$own" ] && probe_open own-log "$own" # a job's log; a command's output is a pipe
`

const probeEnd = "echo probe=end\n"

// inheritedDescriptors are the writable descriptors the binaries are started with, as a
// careless parent would leave them: a pipe at fd 3 and a file at fd 7.
type inheritedDescriptors struct {
	files      []*os.File
	pipe, file string // their /proc/<pid>/fd link targets
}

func newInheritedDescriptors(t *testing.T) *inheritedDescriptors {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "inherited"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pr.Close()
		pw.Close()
		f.Close()
	})
	var st syscall.Stat_t
	if err := syscall.Fstat(int(pw.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return &inheritedDescriptors{
		files: []*os.File{pw, nil, nil, nil, f}, // fd 3 and fd 7
		pipe:  fmt.Sprintf("pipe:[%d]", st.Ino), file: f.Name(),
	}
}

// requireHeldBy checks that each process really holds both descriptors, so that their absence
// from shells proves something.
func (d *inheritedDescriptors) requireHeldBy(t *testing.T, procs ...*mpProc) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Log("not root: cannot look into the non-dumpable binaries to confirm they hold fds 3 and 7")
		return
	}
	for _, p := range procs {
		for fd, want := range map[int]string{3: d.pipe, 7: d.file} {
			got, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", p.cmd.Process.Pid, fd))
			if err != nil || got != want {
				t.Fatalf("%s fd %d is %q (%v), want %s: it did not inherit the descriptor", p.name, fd, got, err, want)
			}
		}
	}
}

// describe names target when it is one of the inherited descriptors ("" otherwise).
func (d *inheritedDescriptors) describe(target string) string {
	switch target {
	case d.pipe:
		return ": the pipe the primary and worker inherited as fd 3"
	case d.file:
		return ": the file the primary and worker inherited as fd 7"
	}
	return ""
}
