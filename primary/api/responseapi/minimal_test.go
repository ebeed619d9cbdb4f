package responseapi_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/shellmode"
)

// recordingPreflight finds the problems it is given and records every target it checked.
type recordingPreflight struct {
	problems []shellmode.Problem
	mu       sync.Mutex
	checked  []shellmode.Target
}

func (p *recordingPreflight) Check(_ context.Context, t shellmode.Target) []shellmode.Problem {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checked = append(p.checked, t)
	return p.problems
}

func (p *recordingPreflight) targets() []shellmode.Target {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]shellmode.Target(nil), p.checked...)
}

// TestMinimalResponsesOpenOnlyAfterThePreflight drives the real primary: its ResponseService
// runs the same preflight as the operators' SetShellMode before a response opens minimal.
func TestMinimalResponsesOpenOnlyAfterThePreflight(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	open := func(t *testing.T, agent string, mode responsev1.ShellMode) (string, error) {
		t.Helper()
		req := openReq(mode)
		req.AgentName = agent
		resp, err := env.Runtime.OpenResponse(ctx, req)
		if err == nil {
			t.Cleanup(func() {
				_, _ = env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
			})
		}
		return resp.GetResponseId(), err
	}

	t.Run("APassingPreflightOpensAMinimalResponse", func(t *testing.T) {
		id, err := open(t, "tester", responsev1.ShellMode_SHELL_MODE_MINIMAL)
		if err != nil {
			t.Fatalf("OpenResponse: %v", err)
		}
		r, ok := env.Primary.Internals().Responses.Get(id)
		if !ok || r.Inspect(0).ShellMode != "minimal" {
			t.Fatalf("response %s open %v, want it open in the minimal mode", id, ok)
		}
	})

	// Agent "blocked" cannot have a workspace (a file stands where it belongs), and the
	// primary's agent_cli_bin/mindroom-agent is gone: two problems of the local shell.
	if err := os.MkdirAll(filepath.Join(env.StateDir, "workspaces"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.StateDir, "workspaces", "blocked"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(env.StateDir, "agent_cli_bin", "mindroom-agent")); err != nil {
		t.Fatal(err)
	}

	t.Run("AFailingPreflightListsEveryProblemWithItsFixAndOpensNothing", func(t *testing.T) {
		before := len(env.Primary.Internals().Responses.List())
		_, err := open(t, "blocked", responsev1.ShellMode_SHELL_MODE_MINIMAL)
		if status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("OpenResponse: %v, want FailedPrecondition", err)
		}
		msg := status.Convert(err).Message()
		for _, want := range []string{
			`agent "blocked"`, "no response was opened", "2 problem(s)",
			"(1) the workspace of agent \"blocked\" cannot be created", "Fix: make the primary's state directory writable",
			"(2) " + filepath.Join(env.StateDir, "agent_cli_bin", "mindroom-agent") + " is missing", "Fix: restart the primary",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("message lacks %q:\n%s", want, msg)
			}
		}
		var checks []string
		for _, d := range status.Convert(err).Details() {
			if pf, ok := d.(*errdetails.PreconditionFailure); ok {
				for _, v := range pf.GetViolations() {
					checks = append(checks, v.GetType())
				}
			}
		}
		if strings.Join(checks, ",") != "workspace,agent_cli_bin" {
			t.Errorf("violations %v, want workspace and agent_cli_bin", checks)
		}
		if after := len(env.Primary.Internals().Responses.List()); after != before {
			t.Errorf("%d responses open after the refused open, %d before", after, before)
		}
	})

	for _, mode := range []responsev1.ShellMode{responsev1.ShellMode_SHELL_MODE_STANDARD, responsev1.ShellMode_SHELL_MODE_UNSPECIFIED} {
		t.Run(mode.String()+"OpensWithoutThePreflight", func(t *testing.T) {
			id, err := open(t, "blocked", mode)
			if err != nil {
				t.Fatalf("OpenResponse: %v", err)
			}
			if r, ok := env.Primary.Internals().Responses.Get(id); !ok || r.Inspect(0).ShellMode != "standard" {
				t.Fatalf("response %s open %v, want it open in the standard mode", id, ok)
			}
		})
	}
}

// TestOnlyAnExplicitMinimalModeRunsThePreflight counts the checks of a hand-written preflight.
func TestOnlyAnExplicitMinimalModeRunsThePreflight(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	pf := &recordingPreflight{}
	api := newAPI(t, env, pf)
	open := func(t *testing.T, req *responsev1.OpenResponseRequest) error {
		t.Helper()
		resp, err := api.OpenResponse(ctx, req)
		if err == nil {
			t.Cleanup(func() {
				_, _ = env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
			})
		}
		return faultgrpc.Status(ctx, nil, "", err) // as the server's interceptor maps it
	}

	for _, mode := range []responsev1.ShellMode{responsev1.ShellMode_SHELL_MODE_STANDARD, responsev1.ShellMode_SHELL_MODE_UNSPECIFIED} {
		if err := open(t, openReq(mode)); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
	}
	if got := pf.targets(); len(got) != 0 {
		t.Fatalf("standard and unspecified opens ran the preflight for %v", got)
	}

	keyed := openReq(responsev1.ShellMode_SHELL_MODE_MINIMAL)
	keyed.WorkerKey = "key-a"
	if err := open(t, keyed); err != nil {
		t.Fatalf("minimal open with no problem: %v", err)
	}
	want := shellmode.Target{Agent: "tester", Channel: "!room:example.org", Thread: "$thread", WorkerKey: "key-a"}
	if got := pf.targets(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("checked %v, want exactly %v", got, want)
	}

	invalid := openReq(responsev1.ShellMode_SHELL_MODE_MINIMAL)
	invalid.AgentName = "../escape"
	if err := open(t, invalid); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("invalid agent name: %v, want InvalidArgument", err)
	}
	if got := pf.targets(); len(got) != 1 {
		t.Fatalf("an invalid request reached the preflight (which creates workspaces): %v", got)
	}
}
