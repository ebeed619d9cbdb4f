package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/turncli/turncli/internal/jobproc"
)

func TestRemoveOrphansKeepsOnlyLiveMakers(t *testing.T) {
	base := t.TempDir()
	cluster := func(name, owner string) string {
		dir := filepath.Join(base, "pgtest-"+name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	live := filepath.Join(base, "pgtest-live")
	if err := os.Mkdir(live, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeOwner(live); err != nil {
		t.Fatal(err)
	}

	exited := exec.Command("sleep", "60")
	if err := exited.Start(); err != nil {
		t.Fatal(err)
	}
	start, err := jobproc.StartTime(exited.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_ = exited.Process.Kill()
	_ = exited.Wait()
	dead := cluster("dead", fmt.Sprintf("%d %d\n", exited.Process.Pid, start))
	reused := cluster("reused", fmt.Sprintf("%d 1\n", os.Getpid())) // our pid, another start
	unowned := cluster("unowned", "")
	garbled := cluster("garbled", "not an owner")
	other := filepath.Join(base, "other-dir")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}

	removeOrphans(base)

	for dir, kept := range map[string]bool{live: true, dead: false, reused: false, unowned: true, garbled: true, other: true} {
		_, err := os.Stat(dir)
		if got := err == nil; got != kept {
			t.Errorf("%s kept %v, want %v (%v)", filepath.Base(dir), got, kept, err)
		}
	}
}
