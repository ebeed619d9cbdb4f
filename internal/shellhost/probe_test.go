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
