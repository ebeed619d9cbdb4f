package shellmode_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/toolkits/shelltk"
	"github.com/turncli/turncli/primary/workerhub"
)

// localShell lays out a state directory as the primary's shell host does.
type localShell struct {
	state, url string
}

func (l localShell) Workspace(agent string) (string, error) {
	dir := filepath.Join(l.state, "workspaces", agent)
	return dir, os.MkdirAll(dir, 0o700)
}
func (l localShell) AgentCLIURL() string { return l.url }

// Probe runs a real Bash in the workspace, as the test's user, the way the primary's shells
// would start; a workspace that is not a writable directory fails it.
func (l localShell) Probe(ctx context.Context, agent string) error {
	dir, err := l.Workspace(agent)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "bash", "-c", "test -w . || echo not writable", "probe")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err == nil && len(out) > 0 {
		err = errors.New(strings.TrimSpace(string(out)))
	}
	return err
}
func (l localShell) BinDir() string { return filepath.Join(l.state, "agent_cli_bin") }

// readyLocal is a local shell that passes every check: an answering listener, an executable
// client and a state directory to put workspaces in.
func readyLocal(t *testing.T) localShell {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler()) // any answer counts
	t.Cleanup(srv.Close)
	l := localShell{state: t.TempDir(), url: srv.URL}
	if err := os.MkdirAll(l.BinDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.BinDir(), shellmode.AgentBinaryName), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return l
}

func shellRegistry(t *testing.T, tk catalog.Toolkit) *catalog.Registry {
	t.Helper()
	r := catalog.NewRegistry()
	if tk != nil {
		if err := r.Register(context.Background(), tk); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// closedURL is a loopback address nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// workers is a hub with a fixed set of connected workers.
type workers struct {
	connected []workerhub.Identity
	url       string
	err       error
}

func (w workers) Workers() []workerhub.Identity { return w.connected }
func (w workers) NextAgentCLIURL(string) (string, error) {
	return w.url, w.err
}

// hidingShell is the shell toolkit offering kill_shell_command to no one.
type hidingShell struct{ *shelltk.Toolkit }

func (hidingShell) Offers(function string, _ catalog.Identity) bool {
	return function != "kill_shell_command"
}

// checks names the checks that failed, in order; every problem must say what and how to fix.
func checks(t *testing.T, problems []shellmode.Problem) []string {
	t.Helper()
	out := []string{}
	for _, p := range problems {
		if p.What == "" || p.Fix == "" {
			t.Errorf("problem %+v lacks what is wrong or its fix", p)
		}
		out = append(out, p.Check)
	}
	return out
}

func TestPreflight(t *testing.T) {
	ctx := context.Background()
	agent := catalog.Identity{Agent: "code"}
	target := shellmode.Target{Agent: agent.Agent, Channel: "room", Thread: "t"}

	t.Run("AReadyLocalShellHasNoProblem", func(t *testing.T) {
		p := shellmode.New(shellmode.Config{Registry: shellRegistry(t, shelltk.New(shelltk.Options{})), Local: readyLocal(t)})
		if problems := p.Check(ctx, target); len(problems) != 0 {
			t.Fatalf("problems %+v", problems)
		}
	})

	t.Run("EveryLocalProblemIsReportedAtOnce", func(t *testing.T) {
		l := readyLocal(t)
		l.url = closedURL(t)
		if err := os.Remove(filepath.Join(l.BinDir(), shellmode.AgentBinaryName)); err != nil {
			t.Fatal(err)
		}
		// A file where the workspaces directory belongs: the workspace cannot be created.
		if err := os.WriteFile(filepath.Join(l.state, "workspaces"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		p := shellmode.New(shellmode.Config{Registry: shellRegistry(t, nil), Local: l})
		problems := p.Check(ctx, target)
		want := []string{"shell_toolkit", "workspace", "agent_cli_listener", "agent_cli_bin"}
		if got := checks(t, problems); !slices.Equal(got, want) {
			t.Fatalf("checks %v, want %v: %+v", got, want, problems)
		}
	})

	t.Run("AListenerThatAnsweredIsTrustedForAMinute", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		l := readyLocal(t)
		l.url = srv.URL
		clk := clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		p := shellmode.New(shellmode.Config{Registry: shellRegistry(t, shelltk.New(shelltk.Options{})), Local: l, Clock: clk})
		if problems := p.Check(ctx, target); len(problems) != 0 {
			t.Fatalf("problems %+v", problems)
		}
		srv.Close()
		clk.Advance(time.Minute - time.Nanosecond)
		if problems := p.Check(ctx, target); len(problems) != 0 {
			t.Fatalf("within a minute of its answer: problems %+v", problems)
		}
		clk.Advance(time.Nanosecond)
		if got := checks(t, p.Check(ctx, target)); !slices.Equal(got, []string{"agent_cli_listener"}) {
			t.Fatalf("a minute after its answer: checks %v, want the listener's", got)
		}
		// A failed probe earns no trust: the next check probes again.
		if got := checks(t, p.Check(ctx, target)); !slices.Equal(got, []string{"agent_cli_listener"}) {
			t.Fatalf("after a failed probe: checks %v, want the listener's", got)
		}
	})

	t.Run("AClientThatIsNotExecutableIsAProblem", func(t *testing.T) {
		l := readyLocal(t)
		if err := os.Chmod(filepath.Join(l.BinDir(), shellmode.AgentBinaryName), 0o600); err != nil {
			t.Fatal(err)
		}
		p := shellmode.New(shellmode.Config{Registry: shellRegistry(t, shelltk.New(shelltk.Options{})), Local: l})
		if got := checks(t, p.Check(ctx, target)); !slices.Equal(got, []string{"agent_cli_bin"}) {
			t.Fatalf("checks %v", got)
		}
	})

	for _, tc := range []struct {
		name     string
		toolkits []string
		want     []string
	}{
		{"NoSelectionTakesTheShellToolkit", nil, []string{}},
		{"ASelectionNamingTheShellToolkitHasNoProblem", []string{"test", "shell"}, []string{}},
		{"APatternMatchingTheShellToolkitHasNoProblem", []string{"sh?ll"}, []string{}},
		{"ASelectionLeavingOutTheShellToolkitIsAProblem", []string{"test", "interaction"}, []string{"shell_toolkit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := shellmode.New(shellmode.Config{Registry: shellRegistry(t, shelltk.New(shelltk.Options{})), Local: readyLocal(t)})
			selected := target
			selected.Toolkits = tc.toolkits
			problems := p.Check(ctx, selected)
			if got := checks(t, problems); !slices.Equal(got, tc.want) {
				t.Fatalf("checks %v, want %v", got, tc.want)
			}
			if len(problems) == 1 && problems[0].What != `the response's toolkit selection ("test", "interaction") leaves out the "shell" toolkit, so its shell would have no shell functions` {
				t.Errorf("problem %q", problems[0].What)
			}
		})
	}

	t.Run("AShellToolkitHidingKillFromTheAgentIsAProblem", func(t *testing.T) {
		p := shellmode.New(shellmode.Config{Registry: shellRegistry(t, hidingShell{shelltk.New(shelltk.Options{})}), Local: readyLocal(t)})
		problems := p.Check(ctx, target)
		if got := checks(t, problems); !slices.Equal(got, []string{"shell_toolkit"}) || !strings.Contains(problems[0].What, "kill_shell_command") ||
			strings.Contains(problems[0].What, "run_shell_command") {
			t.Fatalf("problems %+v", problems)
		}
	})

	for _, tc := range []struct {
		name    string
		workers shellmode.Workers
		want    []string
	}{
		{"AConnectedWorkerWithItsProxyHasNoProblem", workers{connected: []workerhub.Identity{{Key: "k", ID: "w1"}}, url: "http://127.0.0.1:9"}, []string{}},
		{"NoWorkerOfTheKeyIsAProblem", workers{connected: []workerhub.Identity{{Key: "other", ID: "w1"}}, url: "http://x"}, []string{"worker"}},
		{"AWorkerWithoutItsProxyIsAProblem", workers{connected: []workerhub.Identity{{Key: "k", ID: "w1"}}}, []string{"worker"}},
		{"NoWorkerAbleToTakeTheShellIsAProblem", workers{connected: []workerhub.Identity{{Key: "k", ID: "w1"}}, err: errors.New("every worker is at capacity")}, []string{"worker"}},
		{"APrimaryWithoutWorkersIsAProblem", nil, []string{"worker"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The local shell is broken: a worker-keyed shell does not use it.
			p := shellmode.New(shellmode.Config{Registry: shellRegistry(t, shelltk.New(shelltk.Options{})), Workers: tc.workers})
			keyed := target
			keyed.WorkerKey = "k"
			if got := checks(t, p.Check(ctx, keyed)); !slices.Equal(got, tc.want) {
				t.Fatalf("checks %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("AMissingWorkerAndAMissingShellToolkitAreReportedTogether", func(t *testing.T) {
		p := shellmode.New(shellmode.Config{Registry: shellRegistry(t, nil), Workers: workers{}})
		keyed := target
		keyed.WorkerKey = "k"
		if got := checks(t, p.Check(ctx, keyed)); !slices.Equal(got, []string{"shell_toolkit", "worker"}) {
			t.Fatalf("checks %v", got)
		}
	})
}
