package operator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
)

// shellModeAPI serves OperatorService over env's engines, with the preflight checking env's
// real catalog, local shell host and worker hub.
func shellModeAPI(t *testing.T, env *testenv.Env) operatorv1.OperatorServiceClient {
	t.Helper()
	p := env.Primary
	srv := newServer(t, primaryEngines(env))
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(faultgrpc.UnaryServerInterceptor(nil), operator.NewAuthenticator(p.Internals().Store).UnaryInterceptor()))
	operatorv1.RegisterOperatorServiceServer(gs, srv)
	lis := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return operatorv1.NewOperatorServiceClient(dialBufconn(t, lis, adminToken(t, env)))
}

func violationTypes(err error) []string {
	var out []string
	for _, d := range status.Convert(err).Details() {
		if pf, ok := d.(*errdetails.PreconditionFailure); ok {
			for _, v := range pf.GetViolations() {
				out = append(out, v.GetType())
			}
		}
	}
	return out
}

func TestMinimalShellModePreflightOnARealPrimary(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	admin := shellModeAPI(t, env)
	conv := &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$t"}
	minimal := func(agent, workerKey string) error {
		_, err := admin.SetShellMode(ctx, &operatorv1.SetShellModeRequest{
			Conversation: conv, AgentName: agent, Mode: operatorv1.ShellMode_SHELL_MODE_MINIMAL, WorkerKey: workerKey,
		})
		return err
	}
	stored := func(t *testing.T, agent string) store.ShellModeSetting {
		t.Helper()
		m, err := env.Primary.Internals().Store.ShellMode(ctx, conv.Channel, conv.Thread, agent)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	t.Run("AReadyLocalShellIsSaved", func(t *testing.T) {
		if err := minimal("ready", ""); err != nil {
			t.Fatal(err)
		}
		if m := stored(t, "ready"); m.Mode != store.ShellModeMinimal || m.UpdatedBy != operators.FirstAdmin {
			t.Fatalf("stored %+v", m)
		}
	})

	t.Run("AnUnusableWorkspaceAndAMissingClientAreReportedTogether", func(t *testing.T) {
		// A file where the agent's workspace directory belongs, and no agent_cli_bin client.
		if err := os.WriteFile(filepath.Join(env.StateDir, "workspaces", "blocked"), []byte("in the way"), 0o600); err != nil {
			t.Fatal(err)
		}
		client := filepath.Join(env.Primary.Internals().Shells.BinDir(), shellmode.AgentBinaryName)
		saved, err := os.ReadFile(client)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(client); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.WriteFile(client, saved, 0o700) })

		err = minimal("blocked", "")
		wantCode(t, "SetShellMode", err, codes.FailedPrecondition)
		if got := strings.Join(violationTypes(err), ","); got != "workspace,agent_cli_bin" {
			t.Fatalf("problems %s in %v; want workspace and agent_cli_bin", got, err)
		}
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "nothing was saved") || strings.Count(msg, "Fix:") != 2 {
			t.Fatalf("message %q", msg)
		}
		if m := stored(t, "blocked"); m.Mode != store.ShellModeStandard || m.UpdatedBy != "" {
			t.Fatalf("a refused mode was saved: %+v", m)
		}
	})

	t.Run("AWorkerKeyWithNoWorkerConnectedIsAProblemUntilOneConnects", func(t *testing.T) {
		err := minimal("remote", "key-b")
		wantCode(t, "SetShellMode", err, codes.FailedPrecondition)
		if got := strings.Join(violationTypes(err), ","); got != "worker" || !strings.Contains(err.Error(), `no worker with key "key-b" is connected`) {
			t.Fatalf("problems %s in %v", got, err)
		}
		if m := stored(t, "remote"); m.Mode != store.ShellModeStandard {
			t.Fatalf("a refused mode was saved: %+v", m)
		}
		env.StartWorker(t, "key-b", "wb")
		env.WaitForWorker(t, "wb")
		if err := minimal("remote", "key-b"); err != nil {
			t.Fatal(err)
		}
		if m := stored(t, "remote"); m.Mode != store.ShellModeMinimal {
			t.Fatalf("stored %+v", m)
		}
	})
}

// primaryEngines is a Config over the engines of env's primary, as the primary assembles it,
// with a preflight checking its real catalog, local shell host and worker hub.
func primaryEngines(env *testenv.Env) operator.Config {
	p := env.Primary
	return operator.Config{
		Store: p.Internals().Store, Jobs: p.Internals().Jobs, Approvals: p.Internals().Interaction.Background, Prompts: p.Internals().Interaction.Prompts, Allowances: p.Internals().Store,
		Questions: p.Internals().Interaction.Questions, Progress: p.Internals().Interaction.Progress, Responses: p.Internals().Responses, Events: p.Internals().Events,
		CallApprovals: p.Internals().Responses.CallApprovals(), Workers: p.Internals().Workers, ShellModes: p.Internals().Store,
		ShellPreflight: shellmode.New(shellmode.Config{Registry: p.Internals().Registry, Local: p.Internals().Shells, Workers: p.Internals().Workers}),
		IdentityLinks:  p.Internals().Store,
	}
}
