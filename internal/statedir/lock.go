package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockFile is the name of the file, in the state directory, a primary holds locked while it
// runs. It holds the primary's pid, for the message a second primary prints.
const LockFile = "primary.lock"

// Lock is a primary's hold on its state directory. The kernel releases it when the process
// ends however it ends (flock(2) belongs to the open file, which dies with the process), so a
// killed primary leaves no stale lock. The file is opened close-on-exec: no shell or job the
// primary starts inherits it, so none keeps the directory locked after the primary is gone.
type Lock struct {
	f *os.File
}

// Acquire takes dir's lock, which must be free, and records this process's pid in it. When
// another process holds it, the error is a *HeldError naming that process.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state directory lock: %w", err)
	}
	if err := lockExclusive(f); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, held(dir)
		}
		return nil, fmt.Errorf("state directory lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("state directory lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up. The file stays: were it removed, a second process that had opened
// it could lock the removed file while a third locks a new one, and both would run.
func (l *Lock) Release() error { return l.f.Close() }

// lockExclusive takes f's exclusive lock without waiting. It retries an interrupted call, and
// a lock whose recorded holder is gone: a reader's probe (see running) holds a shared lock for
// the instant between two system calls, and a primary starting in that instant should not
// refuse.
func lockExclusive(f *os.File) error {
	var err error
	for range probeRetries {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EWOULDBLOCK) && !holderAlive(f):
			time.Sleep(time.Millisecond)
		default:
			return err
		}
	}
	return err
}

// probeRetries bounds the attempts at a lock whose recorded holder is gone: only a reader's
// probe, or a primary between taking the lock and writing its pid, holds it then, each for
// an instant.
const probeRetries = 50

// holderAlive reports whether the pid recorded in the lock file f names a running process.
func holderAlive(f *os.File) bool {
	return alive(recordedPID(f))
}

// recordedPID is the pid written in the lock file f, 0 when there is none.
func recordedPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// alive reports whether pid names a running process; EPERM means it runs as another user.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// HeldError is a primary refusing a state directory another process holds.
type HeldError struct {
	Dir string
	PID int // the holder's, from the lock file; 0 when it has not written it yet
	// Endpoints are the holder's, when it already serves (nil while it starts or stands by).
	Endpoints *Endpoints
}

func held(dir string) *HeldError {
	e := &HeldError{Dir: dir}
	if f, err := os.Open(filepath.Join(dir, LockFile)); err == nil {
		if pid := recordedPID(f); alive(pid) {
			e.PID = pid // else a previous holder's, not yet replaced
		}
		f.Close()
	}
	if ep, err := readFile(filepath.Join(dir, EndpointsFile)); err == nil && e.PID != 0 && ep.PID == e.PID {
		e.Endpoints = &ep
	}
	return e
}

func (e *HeldError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "another primary is running on state directory %s", e.Dir)
	switch {
	case e.Endpoints != nil:
		fmt.Fprintf(&b, " (pid %d, gRPC %s, REST %s)", e.PID, e.Endpoints.GRPC, e.Endpoints.HTTP)
	case e.PID != 0:
		fmt.Fprintf(&b, " (pid %d, not serving yet)", e.PID)
	}
	b.WriteString("; stop it first, or give this one another --state-dir")
	return b.String()
}

// running reports whether the primary that recorded pid in dir still runs: its process
// exists and, where the directory has a lock file, the lock is held. A recycled pid fails the
// second test; a directory without a lock file (endpoints.json written by hand) only the first.
func running(dir string, pid int) bool {
	if pid != 0 && !alive(pid) {
		return false
	}
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return true // nothing to probe: trust the pid
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return true // held (EWOULDBLOCK), or no way to tell: let the connection say
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
