package shellpriv

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/turncli/turncli/internal/keyring"
)

// SpawnerFunction is the function the spawner goroutine waits in for the life of the process;
// goroutine leak checks in tests ignore it.
const SpawnerFunction = "github.com/turncli/turncli/internal/shellpriv.serve"

type startRequest struct {
	cmd  *exec.Cmd
	join Join
	done chan error
}

// Join moves the spawner thread into a sandbox (its namespaces and control groups) for one
// start, so the child is created inside it; it returns how to leave again. It runs on the
// spawner thread, between other starts, never concurrently with one.
type Join func() (leave func() error, err error)

var spawner struct {
	once     sync.Once
	requests chan startRequest
	// bounded reports whether the bounding set could be emptied (false without CAP_SETPCAP).
	bounded bool
	err     error
}

// StartAs starts cmd (cmd.Start) from the restricted spawner thread, switching the child to u
// when u is not nil. Any SysProcAttr fields cmd already carries are kept; only Credential is set.
func StartAs(cmd *exec.Cmd, u *User) error { return StartIn(cmd, u, nil) }

// StartIn is StartAs from inside the sandbox join enters, when join is not nil.
func StartIn(cmd *exec.Cmd, u *User, join Join) error {
	spawner.once.Do(startSpawner)
	if spawner.err != nil {
		return spawner.err
	}
	if u != nil {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.Uid, Gid: u.Gid, Groups: []uint32{}}
	}
	done := make(chan error, 1)
	spawner.requests <- startRequest{cmd: cmd, join: join, done: done}
	return <-done
}

// BoundingSetEmptied reports whether the spawner thread could empty its capability bounding
// set: true when this process has CAP_SETPCAP (as root usually does).
func BoundingSetEmptied() bool {
	spawner.once.Do(startSpawner)
	return spawner.bounded
}

func startSpawner() {
	spawner.requests = make(chan startRequest)
	ready := make(chan error)
	go serve(ready)
	spawner.err = <-ready
}

// serve locks itself to its thread for good, restricts the thread, then starts every command it
// is sent. Commands start one at a time; starting is a clone and an exec, the command then runs
// on its own.
func serve(ready chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread must stay restricted and alive
	bounded, err := restrictThread()
	spawner.bounded = bounded
	if err == nil {
		// A thread can enter another mount namespace only with file system attributes (root,
		// working directory) of its own; the rest of the process keeps sharing theirs.
		if uerr := unix.Unshare(unix.CLONE_FS); uerr != nil {
			err = fmt.Errorf("shellpriv: unshare the spawner's file system attributes: %w", uerr)
		}
	}
	ready <- err
	if err != nil {
		return // the thread exits with the goroutine; nothing was started from it
	}
	for r := range spawner.requests {
		r.done <- startJoined(r)
	}
}

// startJoined starts r's command, inside its sandbox when it names one. A thread that cannot
// leave a sandbox would start every later command inside it: the spawner then stops for good,
// failing every later start, rather than run one in the wrong place.
func startJoined(r startRequest) error {
	// Each command gets a session keyring of its own, shared with no other command.
	if err := keyring.JoinNew(); err != nil {
		return fmt.Errorf("shellpriv: a new session keyring for the command: %w", err)
	}
	if r.join == nil {
		return r.cmd.Start()
	}
	leave, err := r.join()
	if err != nil {
		return err
	}
	err = r.cmd.Start()
	if lerr := leave(); lerr != nil {
		panic(fmt.Sprintf("shellpriv: the spawner thread cannot leave a sandbox: %v", lerr))
	}
	return err
}

// restrictThread sets no_new_privs, clears the ambient and inheritable capability sets and, when
// permitted, empties the bounding set, all on the calling thread only.
func restrictThread() (bounded bool, err error) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return false, fmt.Errorf("shellpriv: set no_new_privs: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return false, fmt.Errorf("shellpriv: clear ambient capabilities: %w", err)
	}
	if err := clearInheritable(); err != nil {
		return false, err
	}
	bounded = true
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		switch {
		case err == nil:
		case errors.Is(err, unix.EINVAL): // past the last capability this kernel knows
			return bounded, nil
		case errors.Is(err, unix.EPERM): // no CAP_SETPCAP: not root
			return false, nil
		default:
			return false, fmt.Errorf("shellpriv: drop capability %d from the bounding set: %w", c, err)
		}
	}
	return bounded, nil
}

// clearInheritable empties the calling thread's inheritable set; setuid to a non-root user does
// not clear it, and exec would carry it along.
func clearInheritable() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("shellpriv: read capabilities: %w", err)
	}
	if data[0].Inheritable == 0 && data[1].Inheritable == 0 {
		return nil
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("shellpriv: clear inheritable capabilities: %w", err)
	}
	return nil
}
