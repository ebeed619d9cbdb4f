package jobproc

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/turncli/turncli/internal/shellpriv"
)

// A job's identity file closes the window between starting its process and recording it: a
// launcher killed in that instant leaves a record without a pid, and a process nobody could
// find, signal or wait for. Launch creates the file empty; the process appends
// "<pid> <start>\n" to it before its command runs; whoever takes the job over later calls
// Settle, which either reads that identity or, once it has waited long enough, appends a
// tombstone. Appends are atomic and the first line decides: either the process is known or its
// command never runs (the wrapper checks that the first line is its own). A launch is never
// half-known. The file lives where only the launcher's user can open it; the process writes
// it through descriptors Launch gives it.

// tombstone is the line Settle appends to give a launch up.
const tombstone = "never started"

// Identity is a job's process as it named itself: with the pid, the start time names one
// process for good (see Find).
type Identity struct {
	Pid   int
	Start uint64
}

// IdentityState is what an identity file tells of a launch.
type IdentityState int

const (
	// IdentityMissing: nothing written yet; the process may not exist, or may be about to
	// name itself.
	IdentityMissing IdentityState = iota
	// IdentityIncomplete: the first line is not a whole identity (its writer was killed while
	// writing it, or something else wrote there).
	IdentityIncomplete
	// IdentityWritten: the process named itself first; its command runs or ran.
	IdentityWritten
	// IdentityAbandoned: the launch was given up (Settle's tombstone); the command never runs.
	IdentityAbandoned
)

// openIdentity creates the identity file empty and opens it twice for the process: appending,
// and reading from its start.
func openIdentity(path string) (w, r *os.File, err error) {
	w, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	r, err = os.Open(path)
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	return w, r, nil
}

// ReadIdentity reads an identity file: its first line decides.
func ReadIdentity(path string) (Identity, IdentityState) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Identity{}, IdentityMissing
	}
	if err != nil {
		return Identity{}, IdentityIncomplete
	}
	defer f.Close()
	// A line is at most two numbers; anything longer is not an identity.
	line, err := bufio.NewReaderSize(f, 64).ReadSlice('\n')
	switch {
	case len(line) == 0 && err != nil:
		return Identity{}, IdentityMissing
	case err != nil:
		return Identity{}, IdentityIncomplete
	case string(line) == tombstone+"\n":
		return Identity{}, IdentityAbandoned
	}
	id, err := parseIdentity(string(line))
	if err != nil {
		return Identity{}, IdentityIncomplete
	}
	return id, IdentityWritten
}

func parseIdentity(s string) (Identity, error) {
	line, ok := strings.CutSuffix(s, "\n")
	f := strings.Fields(line)
	if !ok || len(f) != 2 {
		return Identity{}, fmt.Errorf("jobproc: malformed identity")
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return Identity{}, fmt.Errorf("jobproc: malformed identity pid")
	}
	start, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return Identity{}, fmt.Errorf("jobproc: malformed identity start time")
	}
	return Identity{Pid: pid, Start: start}, nil
}

// Settle decides a launch whose launcher may have died before recording its process. It waits
// until deadline (polling every poll) for the process to name itself; a launch still unnamed
// then is given up by appending the tombstone, which the process, if it ever gets that far,
// finds first and exits without running its command. It returns IdentityWritten with the
// identity, IdentityAbandoned (now or earlier), or IdentityIncomplete when the first line is no
// identity, or names a live process that is not a shell's (the process's fate is unknown).
// Only the process's own launcher may still be alive to race it; Settle is for a launch whose
// launcher is gone.
//
// shell is the user jobs run as outside a sandbox (nil: this process's own).
func Settle(path string, shell *shellpriv.User, deadline time.Time, poll time.Duration) (Identity, IdentityState, error) {
	for {
		id, st := ReadIdentity(path)
		switch {
		case st == IdentityWritten:
			if !runsAsShell(id, shell) {
				return Identity{}, IdentityIncomplete, nil
			}
			return id, st, nil
		case st == IdentityAbandoned:
			return id, st, nil
		case time.Now().Before(deadline):
			time.Sleep(poll) // an incomplete line may be one being written
			continue
		case st == IdentityIncomplete:
			return id, st, nil
		}
		if err := appendTombstone(path); err != nil {
			return Identity{}, IdentityMissing, fmt.Errorf("jobproc: give up the launch: %w", err)
		}
		// The next read sees the tombstone, or the identity the process appended first.
	}
}

// runsAsShell reports whether id, when it names a live process, names one running as the
// shell user. The identity file is written by the job's user, so it is not trusted to name a
// process the launcher would otherwise signal on its behalf.
func runsAsShell(id Identity, shell *shellpriv.User) bool {
	if !Alive(id.Pid, id.Start) {
		return true // gone: nothing will be signalled, its status file tells the rest
	}
	if isSandboxInit(id.Pid) {
		// A sandbox's init names itself before the job's command exists, and the command never
		// holds the identity file: what it names is the init.
		return true
	}
	uid, err := processUID(id.Pid)
	if err != nil {
		return false
	}
	want := uint32(os.Getuid())
	if shell != nil {
		want = shell.Uid
	}
	return uid == want
}

// processUID is the real uid of pid.
func processUID(pid int) (uint32, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			uid, err := strconv.ParseUint(f[0], 10, 32)
			return uint32(uid), err
		}
	}
	return 0, fmt.Errorf("jobproc: no uid in /proc/%d/status", pid)
}

// appendTombstone appends the tombstone line to the identity file, creating it if need be.
func appendTombstone(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(tombstone + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
