package jobproc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/containment"
	"github.com/turncli/turncli/internal/reaper"
	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/internal/shellpriv"
)

// wrapper runs the command and records its exit status. Its trap is a handler, not an
// ignore, so SIGTERM to the group still reaches the command (handlers reset on exec) while
// the wrapper waits for the command to end and writes its status. $0 is "jobproc", $1 the
// command, $2 "identity" when the launch has an identity file (see identity.go), $3
// "supervised" when the job's process is a supervisor (internal/reaper), the wrapper's parent,
// whose identity is then the one written. The job's user
// may not be able to open the files' paths, so they are open on descriptors the command itself
// does not get: the status file on fd 3, the identity file on fd 4 (appending) and fd 5
// (reading from its start). The wrapper appends its identity and runs the command only when the
// file's first line is that identity: a first line already there is the tombstone of a launch
// given up, and the command never runs.
//
// The command runs in a login shell, whose profile may set PATH anew (Debian's /etc/profile
// does); the PATH the job was given (with agent_cli_bin first) is restored before the
// command, so the job finds the same programs its environment named.
//
// A SIGTERM that arrives in the instant between the trap and the command's own start (the
// first milliseconds of the job) is taken by the handler and missed by the command; the
// SIGKILL after the grace still stops the job, which then ends with 137.
const wrapper = `trap : TERM INT HUP
if [ -n "$2" ]; then
	pid=$$
	[ "$3" = supervised ] && pid=$PPID
	read -r stat </proc/$pid/stat
	stat=(${stat##*)})
	me="$pid ${stat[19]}"
	printf '%s\n' "$me" >&4
	read -r first <&5
	[ "$first" = "$me" ] || exit 0
	exec 4>&- 5>&-
fi
keep=
[ -n "${PATH+set}" ] && keep="export PATH=${PATH@Q}"
bash -lc "$keep
$1" 3>&-
code=$?
printf '%d\n' "$code" >&3
exit "$code"`

// Spec is a job process to start.
type Spec struct {
	// Bash is the bash executable.
	Bash string
	// Command runs as `bash -lc <Command>`.
	Command string
	// Dir is the working directory; it must exist.
	Dir string
	// Env is the complete environment ("K=V"); never merged with this process's own.
	Env []string
	// LogPath receives stdout and stderr, appended. StatusPath receives the exit status.
	LogPath, StatusPath string
	// IdentityPath, when set, receives the process's pid and start time before the command
	// runs, so a launcher that dies before recording them leaves them found (see Settle).
	IdentityPath string
	// Sandbox, when set, runs the job in a sandbox of its own (internal/sandbox), whose init is
	// the job's process: it names itself, supervises the command as the agent's user, and ends
	// the sandbox with it.
	Sandbox *sandbox.Job
	// User is the user the job runs as outside a sandbox; nil: this process's own user.
	User *shellpriv.User
}

// Process is a job's process: one this process started (and may reap), or one found again
// by pid and start time.
type Process struct {
	Pid   int
	Start uint64
	// StatusPath is where the exit status is written when the command ends.
	StatusPath string
	cmd        *exec.Cmd         // nil when found again: not our child
	leaf       *containment.Leaf // nil where the host offers no cgroup containment
	// supervised: the process is a supervisor (internal/reaper) holding the job's tree, where
	// there is no leaf. It is killed by request, never by SIGKILL, which would leave the tree.
	supervised bool
	// sandboxed: the process is the init of the job's sandbox (internal/sandbox), a supervisor
	// too, with control groups of its own to remove when it ends.
	sandboxed bool
}

// Launch starts spec in its own session, so the group can be signalled as one and the job
// survives this process (no parent-death signal). Where the host offers no cgroup leaf the
// session's process is a supervisor instead, detached from this process like the job, that
// forwards the group's SIGTERM to the job and kills everything the job started when the job
// ends or is killed.
func Launch(spec Spec) (*Process, error) {
	if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the workspace %s is not a usable directory", spec.Dir)
	}
	logf, err := os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the process holds its own copy
	statusf, err := os.OpenFile(spec.StatusPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer statusf.Close()
	files, identity := []*os.File{statusf}, ""
	if spec.IdentityPath != "" {
		idw, idr, err := openIdentity(spec.IdentityPath)
		if err != nil {
			return nil, err
		}
		defer idw.Close()
		defer idr.Close()
		files, identity = append(files, idw, idr), "identity"
	}
	env := spec.Env
	if env == nil {
		env = []string{} // nil would make os/exec inherit this process's environment
	}
	if spec.Sandbox != nil {
		return launchSandboxed(spec, env, logf, files, identity != "")
	}
	// The job's leaf is named after its status file, so a later process finds it again.
	leaf, err := containment.ForJob(spec.StatusPath)
	if err != nil {
		return nil, fmt.Errorf("jobproc: %w", err)
	}
	supervised := ""
	if leaf == nil {
		supervised = "supervised"
	}
	cmd := wrapperCmd(spec, env, logf, files, identity, supervised)
	leaf.Apply(cmd.SysProcAttr)
	if leaf == nil {
		err = reaper.Wrap(cmd, false)
	}
	if err == nil {
		err = shellpriv.StartAs(cmd, spec.User) // without privileges, as the shell user
	}
	leaf.Started()
	if err != nil {
		_ = leaf.Remove()
		return nil, err
	}
	p := &Process{Pid: cmd.Process.Pid, StatusPath: spec.StatusPath, cmd: cmd, leaf: leaf, supervised: leaf == nil}
	// Read before anything can reap it: our unreaped child keeps its /proc entry. Without its
	// start time the process could never be signalled or found again, so it must not run.
	start, err := StartTime(p.Pid)
	if err != nil {
		_ = syscall.Kill(-p.Pid, p.killSignal())
		_ = leaf.Remove()
		_ = cmd.Wait()
		return nil, fmt.Errorf("jobproc: read the start time of the job's process: %w", err)
	}
	p.Start = start
	return p, nil
}

// wrapperCmd is the job's wrapper (see wrapper) in its own session, its output to the log.
func wrapperCmd(spec Spec, env []string, logf *os.File, files []*os.File, identity, supervised string) *exec.Cmd {
	return &exec.Cmd{
		Path:        spec.Bash,
		Args:        []string{"bash", "-c", wrapper, "jobproc", spec.Command, identity, supervised},
		Env:         env,
		Dir:         spec.Dir,
		Stdout:      logf,
		Stderr:      logf,
		ExtraFiles:  files,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
}

// launchSandboxed starts the job's sandbox, whose init runs the wrapper. The init writes the
// log from a pipe the job's user owns (so the job may open its own output again by name), so the
// log stays this process's user's, readable by no shell.
func launchSandboxed(spec Spec, env []string, logf *os.File, files []*os.File, identity bool) (*Process, error) {
	// The init names the job itself (see sandboxinit), so the wrapper writes no identity.
	cmd := wrapperCmd(spec, env, logf, files, "", "")
	if err := spec.Sandbox.Wrap(cmd, identity); err != nil {
		return nil, fmt.Errorf("jobproc: %w", err)
	}
	// Started with this process's privileges, which the init needs to build the sandbox and
	// gives up before the command runs.
	if err := cmd.Start(); err != nil {
		_ = sandbox.RemoveJob(spec.StatusPath)
		return nil, err
	}
	p := &Process{Pid: cmd.Process.Pid, StatusPath: spec.StatusPath, cmd: cmd, supervised: true, sandboxed: true}
	start, err := StartTime(p.Pid)
	if err != nil {
		_ = syscall.Kill(p.Pid, syscall.SIGKILL) // the init: its namespace dies with it
		_ = cmd.Wait()
		_ = sandbox.RemoveJob(spec.StatusPath)
		return nil, fmt.Errorf("jobproc: read the start time of the job's process: %w", err)
	}
	p.Start = start
	return p, nil
}

// Find returns the recorded process when it is still the same process (pid and start time),
// or nil when it is gone.
//
// A job that ended while nobody watched (its status file is written) may have left
// descendants in its cgroup leaf: they are killed, so it leaves nothing running. Without a
// status file nothing is killed: the record may simply not name the live process.
func Find(pid int, start uint64, statusPath string) *Process {
	leaf := containment.FindJob(statusPath)
	if pid <= 0 || !Alive(pid, start) {
		if _, ended := ReadStatus(statusPath); ended {
			_ = leaf.Remove()
			_ = sandbox.RemoveJob(statusPath)
		}
		return nil
	}
	sandboxed := isSandboxInit(pid)
	return &Process{Pid: pid, Start: start, StatusPath: statusPath, leaf: leaf,
		supervised: sandboxed || reaper.Is(pid), sandboxed: sandboxed}
}

// killSignal is what kills the job's whole tree: SIGKILL to its group, or a kill request to
// its supervisor.
func (p *Process) killSignal() syscall.Signal {
	if p.supervised {
		return reaper.KillSignal
	}
	return syscall.SIGKILL
}

// Exited reports whether the process has ended: our child is a zombie awaiting Reap; a found
// process's /proc entry is gone, a zombie, or another process.
func (p *Process) Exited() bool {
	if p.cmd == nil {
		return !Alive(p.Pid, p.Start)
	}
	st, err := readProcStat(p.Pid)
	return err != nil || st.state == 'Z' || st.state == 'X'
}

// Signal sends sig to the job's process group while it is still the recorded process, and to
// every other process in the job's cgroup leaf (those that left the group with setsid). A
// supervised job's SIGKILL is its supervisor's kill request, which reaches the same processes.
func (p *Process) Signal(sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		sig = p.killSignal()
	}
	err := signalGroup(p.Pid, p.Start, sig)
	if lerr := p.leaf.Signal(sig); err == nil {
		err = lerr
	}
	return err
}

// Exit is how a job's process ended.
type Exit struct {
	// Code is the command's exit status (128+N when stopped by signal N); valid when Known.
	Code  int
	Known bool
	// TimedOut: stopped at its ceiling. Cancelled: stopped on request. OutputLimit: stopped
	// because its log passed the bound. At most one is set: the first reason to stop.
	TimedOut, Cancelled, OutputLimit bool
}

// Reap collects an exited process: our child is waited for, after killing what it left
// behind in its group (the zombie leader keeps the group id ours until then); a found process
// is known by its status file, or not at all.
func (p *Process) Reap() Exit {
	// What the job left behind dies with it: in its group, and in its leaf beyond the group.
	defer p.leaf.Remove()
	if p.sandboxed {
		defer sandbox.RemoveJob(p.StatusPath)
	}
	if p.cmd != nil {
		_ = syscall.Kill(-p.Pid, p.killSignal())
		_ = p.leaf.Kill()
		_ = p.cmd.Wait()
		if code, ok := ReadStatus(p.StatusPath); ok {
			return Exit{Code: code, Known: true}
		}
		return Exit{Code: bashexec.ExitCode(p.cmd.ProcessState), Known: true}
	}
	code, ok := ReadStatus(p.StatusPath)
	return Exit{Code: code, Known: ok}
}

// ReadStatus reads an exit status file; ok is false when it is missing or incomplete.
func ReadStatus(path string) (code int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
		return 0, false
	}
	code, err = strconv.Atoi(strings.TrimSpace(string(b)))
	return code, err == nil
}

// DefaultPoll is how often Supervise checks for the exit when Watch.Poll is zero.
const DefaultPoll = 100 * time.Millisecond

// DefaultMaxLogBytes bounds a job's log unless its watch says otherwise: output past it
// stops the job, so one chatty command cannot fill the disk the state lives on.
const DefaultMaxLogBytes = 256 << 20

// DefaultJobGrace is the time between SIGTERM and SIGKILL of a background job, at its
// ceiling or when it is cancelled, unless configured: the interaction-controls contract
// fixes it at 2 s. It is not bashexec.DefaultGrace (5 s), which the contract does not bind:
// that one gives a command run in a turn's shell time to clean up.
const DefaultJobGrace = 2 * time.Second

// Watch says how to supervise a process until it exits.
type Watch struct {
	// Deadline is the ceiling: at it the group gets SIGTERM, then SIGKILL after Grace.
	Deadline time.Time
	Grace    time.Duration
	// Poll is how often the process is checked for its exit; DefaultPoll when zero.
	Poll time.Duration
	// LogPath is the job's log; when set, a log over MaxLogBytes (DefaultMaxLogBytes when
	// zero) stops the job as at the ceiling but counts as over the output limit.
	LogPath     string
	MaxLogBytes int64
	// Cancel, when closed, stops the job as at the ceiling but counts as cancelled.
	Cancel <-chan struct{}
	// Stop, when closed, ends the watch without touching the process (it runs on).
	Stop <-chan struct{}
	// Now is the clock Deadline is measured by; time.Now when nil.
	Now func() time.Time
}

// Supervise waits until the process exits, enforcing the ceiling and cancel, then reaps it.
// ok is false when w.Stop ended the watch first; the process then runs on unreaped.
func (p *Process) Supervise(w Watch) (e Exit, ok bool) {
	now := w.Now
	if now == nil {
		now = time.Now
	}
	ceiling := time.NewTimer(max(w.Deadline.Sub(now()), 0))
	defer ceiling.Stop()
	poll := w.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	maxLog := w.MaxLogBytes
	if maxLog <= 0 {
		maxLog = DefaultMaxLogBytes
	}
	var kill <-chan time.Time
	var timedOut, cancelled, overLimit, stopped bool
	stopping := func() {
		stopped = true
		_ = p.Signal(syscall.SIGTERM)
		kill = time.After(w.Grace)
		ceiling.Stop()
	}
	cancel := w.Cancel
	for !p.Exited() {
		select {
		case <-w.Stop:
			return Exit{}, false
		case <-tick.C:
			if w.LogPath != "" && !stopped && logOver(w.LogPath, maxLog) {
				overLimit = true
				stopping()
			}
		case <-ceiling.C:
			timedOut = true
			stopping()
		case <-cancel:
			cancelled, cancel = true, nil
			if !stopped {
				stopping()
			}
		case <-kill:
			kill = nil
			_ = p.Signal(syscall.SIGKILL)
		}
	}
	e = p.Reap()
	e.TimedOut = timedOut && !overLimit
	e.OutputLimit = overLimit
	e.Cancelled = cancelled && !timedOut && !overLimit
	return e, true
}

func logOver(path string, limit int64) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > limit
}

// isSandboxInit reports whether pid is a sandbox's init.
func isSandboxInit(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && sandbox.IsInit(b)
}
