package jobproc_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
)

// noProfile gives a job a home without a login profile, so its log holds only its command's
// output.
const noProfile = "HOME=/nonexistent"

func TestLaunchWritesItsIdentityBeforeTheCommandRuns(t *testing.T) {
	j := launch(t, "cat job.proc", noProfile)
	if e := j.supervise(t, jobproc.Watch{}); e != (jobproc.Exit{Known: true}) {
		t.Fatalf("exit = %+v", e)
	}
	want := fmt.Sprintf("%d %d\n", j.Pid, j.Start)
	if b, _ := os.ReadFile(j.log); string(b) != want {
		t.Errorf("the command saw the identity file hold %q, want %q (pid and start time of the job)", b, want)
	}
	if id, st := jobproc.ReadIdentity(j.identity); st != jobproc.IdentityWritten || id != (jobproc.Identity{Pid: j.Pid, Start: j.Start}) {
		t.Errorf("ReadIdentity = %+v, %v; want the job's process, written", id, st)
	}
}

func TestLaunchWithoutAnIdentityFileRunsTheCommand(t *testing.T) {
	dir := shellprivtest.Dir(t)
	j := launchIn(t, dir, "", "echo ran", noProfile)
	if e := j.supervise(t, jobproc.Watch{}); e != (jobproc.Exit{Known: true}) {
		t.Fatalf("exit = %+v", e)
	}
	if b, _ := os.ReadFile(j.log); string(b) != "ran\n" {
		t.Errorf("log = %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // job.log, job.status
		t.Errorf("the job left %d files, want its log and status only", len(entries))
	}
}

func TestSettle(t *testing.T) {
	const poll = 5 * time.Millisecond
	t.Run("AWrittenIdentityIsReturned", func(t *testing.T) {
		j := launch(t, "echo ready; exec sleep 1000")
		waitForFile(t, j.log, "ready")
		id, st, err := jobproc.Settle(j.identity, nil, time.Now(), poll)
		if err != nil || st != jobproc.IdentityWritten || id != (jobproc.Identity{Pid: j.Pid, Start: j.Start}) {
			t.Fatalf("Settle = %+v, %v, %v; want the running job", id, st, err)
		}
		if jobproc.Find(id.Pid, id.Start, j.status) == nil {
			t.Error("the settled identity does not find the running job")
		}
	})
	t.Run("AnIdentityWrittenWhileItWaitsIsTaken", func(t *testing.T) {
		dir := shellprivtest.Dir(t)
		path := filepath.Join(dir, "job.proc")
		type settled struct {
			id  jobproc.Identity
			st  jobproc.IdentityState
			err error
		}
		ch := make(chan settled, 1)
		go func() {
			id, st, err := jobproc.Settle(path, nil, time.Now().Add(testDeadline), poll)
			ch <- settled{id, st, err}
		}()
		j := launchIn(t, dir, path, "echo ran", noProfile)
		got := <-ch
		if got.err != nil || got.st != jobproc.IdentityWritten || got.id != (jobproc.Identity{Pid: j.Pid, Start: j.Start}) {
			t.Fatalf("Settle = %+v; want the job launched while it waited", got)
		}
		if e := j.supervise(t, jobproc.Watch{}); e != (jobproc.Exit{Known: true}) {
			t.Fatalf("exit = %+v", e)
		}
		if b, _ := os.ReadFile(j.log); string(b) != "ran\n" {
			t.Errorf("log = %q, want the command to have run", b)
		}
	})
	t.Run("AnUnnamedLaunchIsGivenUpAndItsCommandNeverRuns", func(t *testing.T) {
		dir := shellprivtest.Dir(t)
		path := filepath.Join(dir, "job.proc")
		if _, st, err := jobproc.Settle(path, nil, time.Now(), poll); err != nil || st != jobproc.IdentityAbandoned {
			t.Fatalf("Settle = %v, %v; want the launch given up", st, err)
		}
		// The process of the launch, starting only now, finds the tombstone.
		j := launchIn(t, dir, path, "echo ran >ran; echo ran", noProfile)
		j.supervise(t, jobproc.Watch{})
		if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the command of a given-up launch ran (%v)", err)
		}
		if b, _ := os.ReadFile(j.log); len(b) != 0 {
			t.Errorf("a given-up launch logged %q", b)
		}
		if _, ok := jobproc.ReadStatus(j.status); ok {
			t.Error("a given-up launch wrote an exit status")
		}
		if _, st, err := jobproc.Settle(path, nil, time.Now(), poll); err != nil || st != jobproc.IdentityAbandoned {
			t.Errorf("Settle again = %v, %v; want it still given up", st, err)
		}
	})
	t.Run("AnIncompleteIdentityIsLeftUnknown", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "job.proc")
		if err := os.WriteFile(path, []byte("123"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, st, err := jobproc.Settle(path, nil, time.Now(), poll); err != nil || st != jobproc.IdentityIncomplete {
			t.Fatalf("Settle = %v, %v; want incomplete", st, err)
		}
		if b, _ := os.ReadFile(path); string(b) != "123" {
			t.Errorf("Settle changed an identity file it could not read: %q", b)
		}
	})
	t.Run("AnUnwritableDirectoryIsAnError", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing", "job.proc")
		if _, _, err := jobproc.Settle(path, nil, time.Now(), poll); err == nil {
			t.Fatal("Settle gave up a launch without writing its tombstone")
		}
	})
}

func TestReadIdentity(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		content *string
		want    jobproc.Identity
		state   jobproc.IdentityState
	}{
		{name: "MissingIsMissing", state: jobproc.IdentityMissing},
		{name: "EmptyIsMissing", content: ptr(""), state: jobproc.IdentityMissing},
		{name: "WithoutItsNewlineIsIncomplete", content: ptr("12 34"), state: jobproc.IdentityIncomplete},
		{name: "WithoutAStartTimeIsIncomplete", content: ptr("12 \n"), state: jobproc.IdentityIncomplete},
		{name: "PidZeroIsIncomplete", content: ptr("0 34\n"), state: jobproc.IdentityIncomplete},
		{name: "GarbageIsIncomplete", content: ptr("x y\n"), state: jobproc.IdentityIncomplete},
		{name: "CompleteIsWritten", content: ptr("12 34\n"), want: jobproc.Identity{Pid: 12, Start: 34}, state: jobproc.IdentityWritten},
		{name: "TheTombstoneIsAbandoned", content: ptr("never started\n"), state: jobproc.IdentityAbandoned},
		{name: "TheFirstLineDecidesForTheProcess", content: ptr("12 34\nnever started\n"), want: jobproc.Identity{Pid: 12, Start: 34}, state: jobproc.IdentityWritten},
		{name: "TheFirstLineDecidesForTheTombstone", content: ptr("never started\n12 34\n"), state: jobproc.IdentityAbandoned},
		{name: "AnOverlongLineIsIncomplete", content: ptr(strings.Repeat("1", 100) + " 34\n"), state: jobproc.IdentityIncomplete},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "id"+string(rune('a'+i)))
			if c.content != nil {
				if err := os.WriteFile(path, []byte(*c.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if id, st := jobproc.ReadIdentity(path); id != c.want || st != c.state {
				t.Errorf("ReadIdentity(%q) = %+v, %v; want %+v, %v", strings.TrimSpace(deref(c.content)), id, st, c.want, c.state)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}

func TestTheCommandHoldsOnlyTheStandardDescriptors(t *testing.T) {
	// The wrapper holds the status and identity files open; the command gets none of them.
	// What a program the command starts holds is listed (bash's own are close-on-exec), once
	// it sleeps: between its exec and its sleep, its loader and locale hold files of their own.
	j := launch(t, `sleep 5 & until [[ $(</proc/$!/stat) == *"(sleep) S "* ]]; do :; done; cd /proc/$!/fd && echo *; kill $!`, noProfile)
	if e := j.supervise(t, jobproc.Watch{}); e != (jobproc.Exit{Known: true}) {
		t.Fatalf("exit = %+v", e)
	}
	if b, _ := os.ReadFile(j.log); string(b) != "0 1 2\n" {
		t.Errorf("the command's open descriptors are %q, want 0 1 2", b)
	}
}
