package jobproc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// A job's identity file closes the window between starting its process and recording it: a
// launcher killed in that instant leaves a record without a pid, and a process nobody could
// find, signal or wait for. The process itself writes "<pid> <start>\n" to the file before its
// command runs, creating it exclusively; whoever takes the job over later calls Settle, which
// either reads that identity or, once it has waited long enough, creates the file itself as a
// tombstone. Exactly one of the two creates the file, so either the process is known or its
// command never runs: a launch is never half-known.

// tombstone is what Settle writes into an identity file it creates.
const tombstone = "never started\n"

// Identity is a job's process as it named itself: with the pid, the start time names one
// process for good (see Find).
type Identity struct {
	Pid   int
	Start uint64
}

// IdentityState is what an identity file tells of a launch.
type IdentityState int

const (
	// IdentityMissing: no file yet; the process may not exist, or may be about to write it.
	IdentityMissing IdentityState = iota
	// IdentityIncomplete: the file exists but does not hold a whole identity (being written,
	// or its writer was killed while writing it).
	IdentityIncomplete
	// IdentityWritten: the process wrote its identity; its command runs or ran.
	IdentityWritten
	// IdentityAbandoned: the launch was given up (Settle's tombstone); the command never runs.
	IdentityAbandoned
)

// ReadIdentity reads an identity file.
func ReadIdentity(path string) (Identity, IdentityState) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Identity{}, IdentityMissing
	case err != nil:
		return Identity{}, IdentityIncomplete
	case string(b) == tombstone:
		return Identity{}, IdentityAbandoned
	}
	id, err := parseIdentity(string(b))
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
// until deadline (polling every poll) for the identity file to be written; a launch still
// unnamed then is given up by creating the tombstone, which the process, if it ever gets that
// far, finds and exits without running its command. It returns IdentityWritten with the
// identity, IdentityAbandoned (now or earlier), or IdentityIncomplete when the file was created
// but never completed (the process's fate is unknown). Only the process's own launcher may
// still be alive to race it; Settle is for a launch whose launcher is gone.
func Settle(path string, deadline time.Time, poll time.Duration) (Identity, IdentityState, error) {
	for {
		id, st := ReadIdentity(path)
		switch {
		case st == IdentityWritten || st == IdentityAbandoned:
			return id, st, nil
		case time.Now().Before(deadline):
			time.Sleep(poll)
			continue
		case st == IdentityIncomplete:
			return Identity{}, st, nil
		}
		created, err := writeTombstone(path)
		if err != nil {
			return Identity{}, IdentityMissing, fmt.Errorf("jobproc: give up the launch: %w", err)
		}
		if created {
			return Identity{}, IdentityAbandoned, nil
		}
		// The process created the file first: its identity is being written.
		deadline = time.Now().Add(poll * 10)
	}
}

// writeTombstone creates the identity file as a tombstone; false when it exists already.
func writeTombstone(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = f.WriteString(tombstone)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return true, err
}
