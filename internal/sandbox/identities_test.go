package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/turncli/turncli/internal/sandbox"
)

func TestAnAgentKeepsItsIDAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent-ids")
	ids, err := sandbox.OpenIdentities(path, 5000, 3)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ids.For("a")
	b, _ := ids.For("b b\n\"quoted\"")
	if a != 5000 || b != 5001 {
		t.Fatalf("ids %d %d, want 5000 5001", a, b)
	}
	// A crash cut the next line short: its agent gets an id again, the others keep theirs.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("5002 \"c")
	f.Close()
	again, err := sandbox.OpenIdentities(path, 5000, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		agent string
		want  uint32
	}{{"a", 5000}, {"b b\n\"quoted\"", 5001}, {"c", 5002}, {"a ", 0}} {
		agent, want := step.agent, step.want
		got, err := again.For(agent)
		if want == 0 {
			if err == nil {
				t.Fatalf("a fourth agent got %d from a range of three", got)
			}
			continue
		}
		if err != nil || got != want {
			t.Fatalf("For(%q) = %d, %v; want %d", agent, got, err, want)
		}
	}
	reread, _ := sandbox.OpenIdentities(path, 5000, 3)
	if got, _ := reread.For("c"); got != 5002 {
		t.Fatalf("c after the repair: %d", got)
	}
}

func TestTheIDRangeIsChecked(t *testing.T) {
	for _, r := range [][2]uint32{{999, 10}, {5000, 0}, {1 << 31, 1}} {
		if _, err := sandbox.OpenIdentities(filepath.Join(t.TempDir(), "ids"), r[0], r[1]); err == nil {
			t.Errorf("range %v accepted", r)
		}
	}
	if _, err := sandbox.OpenIdentities(filepath.Join(t.TempDir(), "ids"), 1000, 1); err != nil {
		t.Errorf("range 1000-1000: %v", err)
	}
}

func TestTwoProcessesSharingTheRecordNeverGiveOneIDTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent-ids")
	a, _ := sandbox.OpenIdentities(path, 5000, 10)
	b, _ := sandbox.OpenIdentities(path, 5000, 10)
	idA, err := a.For("a")
	if err != nil {
		t.Fatal(err)
	}
	idB, err := b.For("b") // b opened before a gave its id
	if err != nil || idB == idA {
		t.Fatalf("a got %d, b got %d (%v)", idA, idB, err)
	}
	if got, _ := b.For("a"); got != idA {
		t.Fatalf("b sees a as %d, a has %d", got, idA)
	}
}
