package shellhost_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/shellpriv"
)

// agentBinary is a stand-in client that answers --version, in a directory as private as a
// clone in root's home.
func agentBinary(t *testing.T, home string) string {
	t.Helper()
	bin := filepath.Join(home, "clone", "bin", "mindroom-agent")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho mindroom-agent test\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestAProbeRunsAsTheAgentWhereverTheStateIs: with the state directory under a 0700 directory,
// a sandboxed shell of the agent's reaches its workspace and the client; an unisolated one, run
// as the shell user it is given (a value of its configuration, not of the process), cannot,
// and the probe says what it could not do.
func TestAProbeRunsAsTheAgentWhereverTheStateIs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching shells to other users needs root")
	}
	home := t.TempDir() // 0700, as root's home
	state := filepath.Join(home, "clone", ".turncli")
	bin := agentBinary(t, home)
	newRunner := func(t *testing.T, mode string) *shellhost.Runner {
		iso, _, err := shellhost.IsolationConfig{Mode: mode}.Build(state)
		if err != nil {
			t.Fatal(err)
		}
		r, err := shellhost.New(shellhost.Config{Settings: shellhost.Settings{AgentBinary: bin, User: shellpriv.Default()}, StateDir: state, AgentCLIURL: "http://127.0.0.1:1", Sandboxing: iso})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		return r
	}
	t.Run("Isolated", func(t *testing.T) {
		if s := sandbox.Detect(); !s.Namespaces {
			t.Skipf("no sandboxes here: %s", s.Reason)
		}
		if err := newRunner(t, shellhost.IsolationRequired).Probe(context.Background(), "agent-a"); err != nil {
			t.Fatalf("Probe: %v", err)
		}
	})
	t.Run("UnisolatedAsTheShellUser", func(t *testing.T) {
		err := newRunner(t, shellhost.IsolationOff).Probe(context.Background(), "agent-a")
		if err == nil || !strings.Contains(err.Error(), `a shell of agent "agent-a" could not start`) {
			t.Fatalf("Probe: %v", err)
		}
	})
}

func TestTheIsolationModeIsChecked(t *testing.T) {
	if _, _, err := (shellhost.IsolationConfig{Mode: "sometimes"}).Build(t.TempDir()); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
	iso, st, err := shellhost.IsolationConfig{Mode: shellhost.IsolationOff}.Build(t.TempDir())
	if err != nil || iso != nil || st.Isolated || !strings.Contains(st.Detail, "not isolated") {
		t.Fatalf("off: %v %+v %v", iso, st, err)
	}
	if os.Geteuid() != 0 {
		if _, _, err := (shellhost.IsolationConfig{Mode: shellhost.IsolationRequired}).Build(t.TempDir()); err == nil {
			t.Fatal("required isolation started without root")
		}
	}
}

// TestAPassedProbeRunsAgainOnlyWhenWhatItProvedChanged: the client stand-in counts its runs in
// the workspace. A second probe of an unchanged shell runs nothing; a replaced client or a
// workspace its agent can no longer write makes the next probe run, and fail where it must.
func TestAPassedProbeRunsAgainOnlyWhenWhatItProvedChanged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching shells to other users needs root")
	}
	if s := sandbox.Detect(); !s.Namespaces {
		t.Skipf("no sandboxes here: %s", s.Reason)
	}
	home := t.TempDir()
	state := filepath.Join(home, "state")
	bin := filepath.Join(home, "bin", "mindroom-agent")
	writeClient := func(version string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		// Written beside and renamed over the old one, as an upgrade replaces a binary.
		next := bin + ".next"
		if err := os.WriteFile(next, []byte("#!/bin/sh\necho run >> probes\necho mindroom-agent "+version+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(next, bin); err != nil {
			t.Fatal(err)
		}
	}
	writeClient("1")
	iso, _, err := shellhost.IsolationConfig{Mode: shellhost.IsolationRequired}.Build(state)
	if err != nil {
		t.Fatal(err)
	}
	r, err := shellhost.New(shellhost.Config{Settings: shellhost.Settings{AgentBinary: bin}, StateDir: state, AgentCLIURL: "http://127.0.0.1:1", Sandboxing: iso})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	ws, err := r.Workspace("agent-a")
	if err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(ws, "probes"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Count(string(b), "run\n")
	}
	probe := func(t *testing.T, wantRuns int) error {
		t.Helper()
		err := r.Probe(context.Background(), "agent-a")
		if got := runs(); got != wantRuns {
			t.Fatalf("the client ran %d times in probes, want %d", got, wantRuns)
		}
		return err
	}

	t.Run("TheFirstProbeRunsTheClient", func(t *testing.T) {
		if err := probe(t, 1); err != nil {
			t.Fatalf("Probe: %v", err)
		}
	})
	t.Run("AnUnchangedShellIsNotProbedAgain", func(t *testing.T) {
		for range 3 {
			if err := probe(t, 1); err != nil {
				t.Fatalf("Probe: %v", err)
			}
		}
	})
	t.Run("AReplacedClientIsProbedAgain", func(t *testing.T) {
		writeClient("2")
		if err := probe(t, 2); err != nil {
			t.Fatalf("Probe: %v", err)
		}
		if err := probe(t, 2); err != nil {
			t.Fatalf("Probe: %v", err)
		}
	})
	t.Run("AWorkspaceTheAgentCannotWriteFailsTheNextProbe", func(t *testing.T) {
		if err := os.Chmod(ws, 0o500); err != nil {
			t.Fatal(err)
		}
		err := probe(t, 2)
		if err == nil || !strings.Contains(err.Error(), `a shell of agent "agent-a" started, but its workspace `+ws+" is not writable by uid") {
			t.Fatalf("Probe: %v", err)
		}
		// Still failing: a failed probe is never remembered.
		if err := probe(t, 2); err == nil {
			t.Fatal("the second probe of an unwritable workspace passed")
		}
		if err := os.Chmod(ws, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := probe(t, 3); err != nil {
			t.Fatalf("Probe after the workspace was writable again: %v", err)
		}
	})
}
