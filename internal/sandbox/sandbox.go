package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/turncli/turncli/internal/sandbox/mountview"
	"github.com/turncli/turncli/internal/sandbox/sandboxinit"
	"golang.org/x/sys/unix"
)

// selfExe is this binary, as the kernel knows it: still the same file after an upgrade replaced
// it on disk. Every binary that links this package can be a sandbox's init.
const selfExe = "/proc/self/exe"

// startWait bounds how long Start waits for the init to build the sandbox.
const startWait = 10 * time.Second

// Sandbox is a response's sandbox: an init holding its namespaces, and its control groups.
type Sandbox struct {
	name   string
	cmd    *exec.Cmd
	hold   *os.File // the init's standard input: closing it ends the sandbox
	pidns  *os.File
	mntns  *os.File
	groups *cgroupSet
	exited chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// names numbers the sandboxes of this process: a sandbox's control groups are named
// "<pid>.<n>", unique on the host while the process lives (and Sweep finds them after).
var names atomic.Uint64

// Start makes a sandbox for commands: its init builds view and holds it until Close.
func Start(view mountview.View, lim Limits) (*Sandbox, error) {
	if err := view.Validate(); err != nil {
		return nil, err
	}
	name := strconv.Itoa(os.Getpid()) + "." + strconv.FormatUint(names.Add(1), 10)
	groups, err := newCgroups(name, lim)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		groups.remove()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		groups.remove()
		return nil, err
	}
	args := append([]string{sandboxinit.Argv0, sandboxinit.ModeHold, sandboxinit.OptsEnd}, view.Args()...)
	cmd := &exec.Cmd{
		Path: selfExe, Args: args, Env: []string{}, Dir: "/",
		Stdin: inR, Stdout: outW, Stderr: outW,
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC,
			Setsid:     true,
		},
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		groups.remove()
		return nil, fmt.Errorf("sandbox: start its init: %w", err)
	}
	s := &Sandbox{name: name, cmd: cmd, hold: inW, groups: groups, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	if err := s.awaitReady(outR); err != nil {
		_ = s.Close()
		return nil, err
	}
	for _, ns := range []struct {
		name string
		f    **os.File
	}{{"pid", &s.pidns}, {"mnt", &s.mntns}} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/%s", cmd.Process.Pid, ns.name))
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("sandbox: open its %s namespace: %w", ns.name, err)
		}
		*ns.f = f
	}
	// The init can now make itself non-dumpable: its namespaces' files are open here, which
	// would otherwise take the privilege to trace it (CAP_SYS_PTRACE).
	if _, err := s.hold.Write([]byte{'\n'}); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sandbox: its init ended: %w", err)
	}
	return s, nil
}

// awaitReady reads the init's first line: Ready, or why it could not build the sandbox.
func (s *Sandbox) awaitReady(out *os.File) error {
	defer out.Close()
	_ = out.SetReadDeadline(time.Now().Add(startWait))
	line, err := bufio.NewReader(io.LimitReader(out, 4096)).ReadString('\n')
	line = strings.TrimSpace(line)
	switch {
	case line == sandboxinit.Ready:
		return nil
	case line != "":
		return fmt.Errorf("sandbox: %s", line)
	}
	return fmt.Errorf("sandbox: its init ended before the sandbox was built: %v", err)
}

// Join moves the calling thread into the sandbox, for shellpriv.StartIn: the next process it
// clones starts in the sandbox's PID and mount namespaces and control groups.
func (s *Sandbox) Join() (leave func() error, err error) {
	host, err := hostNamespaces()
	if err != nil {
		return nil, err
	}
	if !s.Alive() {
		return nil, ErrEnded
	}
	// Control groups first: the sandbox's view of /sys is read-only.
	leave, err = s.groups.enterThread()
	if err != nil {
		return nil, err
	}
	if err := unix.Setns(int(s.mntns.Fd()), unix.CLONE_NEWNS); err != nil {
		mustLeave(leave)
		return nil, fmt.Errorf("sandbox: enter its mount namespace: %w", err)
	}
	leave = chain(leave, func() error { return unix.Setns(int(host.mnt.Fd()), unix.CLONE_NEWNS) })
	if err := unix.Setns(int(s.pidns.Fd()), unix.CLONE_NEWPID); err != nil {
		mustLeave(leave)
		return nil, fmt.Errorf("sandbox: enter its PID namespace: %w", err)
	}
	return chain(leave, func() error { return unix.Setns(int(host.pid.Fd()), unix.CLONE_NEWPID) }), nil
}

// mustLeave undoes a partial entry. A thread that cannot leave a sandbox would start the next
// command, maybe another agent's, inside it: the process stops instead, as shellpriv does when
// leaving after a start fails.
func mustLeave(leave func() error) {
	if err := leave(); err != nil {
		panic(fmt.Sprintf("sandbox: the spawner thread cannot leave a sandbox it began to enter: %v", err))
	}
}

// chain runs last, then first: leaving undoes entering in reverse.
func chain(first, last func() error) func() error {
	return func() error { return errors.Join(last(), first()) }
}

// ErrEnded reports a sandbox whose init is gone (it was closed, or killed): make a new one.
var ErrEnded = errors.New("sandbox: it has ended")

// Alive reports whether the sandbox's init still runs.
func (s *Sandbox) Alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Close ends the sandbox: its init exits, and with it every process in the sandbox. It
// returns once they are gone, which for a process of the sandbox that is this process's own
// child (a command) means once it has been reaped: the kernel holds the init until then, so
// whoever waits for such a child must not wait for Close first.
func (s *Sandbox) Close() error {
	s.closeOnce.Do(func() {
		s.hold.Close()
		select {
		case <-s.exited:
		case <-time.After(startWait):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		for _, f := range []*os.File{s.pidns, s.mntns} {
			if f != nil {
				f.Close()
			}
		}
		s.closeErr = s.groups.remove()
	})
	return s.closeErr
}

// Events counts the times the sandbox's limits were reached since it started.
func (s *Sandbox) Events() Events { return s.groups.events() }

// Limits are the sandbox's limits.
func (s *Sandbox) Limits() Limits { return s.groups.lim }

type namespaces struct{ pid, mnt *os.File }

// hostNamespaces are this process's own, which the spawner thread returns to.
var hostNamespaces = sync.OnceValues(func() (namespaces, error) {
	pid, err := os.Open("/proc/self/ns/pid")
	if err != nil {
		return namespaces{}, err
	}
	mnt, err := os.Open("/proc/self/ns/mnt")
	if err != nil {
		pid.Close()
		return namespaces{}, err
	}
	return namespaces{pid: pid, mnt: mnt}, nil
})
