package agentcli_test

import (
	"context"
	"net"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/primary/api/agentcli"
	"github.com/turncli/turncli/primary/response"
)

// serveAgentCLI serves AgentCLIService for the env's responses on a gRPC server whose requests
// arrive on path (none when path is nil), the way a sandbox proxy's forwarded calls do.
func serveAgentCLI(t *testing.T, responses *response.Manager, path *response.Path) agentcliv1.AgentCLIServiceClient {
	t.Helper()
	var opts []grpc.ServerOption
	if path != nil {
		opts = append(opts, grpc.ChainUnaryInterceptor(agentcli.PathInterceptor(*path)))
	}
	srv := grpc.NewServer(append(faultgrpc.ServerOptions(nil), opts...)...)
	agentcliv1.RegisterAgentCLIServiceServer(srv, agentcli.NewServer(responses, nil))
	lis := bufconn.Listen(1 << 20)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///agentcli",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		<-done
	})
	return agentcliv1.NewAgentCLIServiceClient(conn)
}

// Section 10: a grant is accepted only on the path its shells use. A primary-local response's
// grant presented through a worker's proxy path is the uniform authentication failure.
func TestGrantIsAcceptedOnlyOnItsShellsPath(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	rc := s.call("test", "echo", `{}`)
	s.await(rc.CallID)

	for _, tc := range []struct {
		name string
		path *response.Path
		want codes.Code
	}{
		{"LoopbackPathAcceptsALocalGrant", &response.LocalPath, codes.OK},
		{"WorkerProxyPathRefusesALocalGrant", &response.Path{WorkerID: "worker-1"}, codes.Unauthenticated},
		{"ServerThatNamesNoPathRefusesEveryGrant", nil, codes.Unauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := serveAgentCLI(t, env.Primary.Internals().Responses, tc.path)
			ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+s.grant,
				"x-mindroom-agent-cli-window", s.windows["b1"])
			_, err := client.Operate(ctx, &agentcliv1.OperateRequest{OperationJson: []byte(`{"operation":"tools.list"}`)})
			requireCode(t, err, tc.want)
			_, err = client.GetCall(ctx, &agentcliv1.GetCallRequest{CallId: rc.CallID})
			requireCode(t, err, tc.want)
		})
	}
}

func requireCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != want {
		t.Fatalf("code %v (%v), want %v", st.Code(), err, want)
	}
	if want == codes.Unauthenticated && st.Message() != "Agent CLI authority is unavailable" {
		t.Fatalf("message %q is not the uniform one", st.Message())
	}
}

// Section 10, over HTTP with real workers: a worker-bound response's grant works only through the
// sandbox proxy of the worker it is bound to; the loopback listener, another worker of the same
// key and a worker of another key all answer the uniform 401. A local grant is refused by every
// proxy.
func TestWorkerBoundGrantWorksOnlyThroughItsWorkersProxy(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	bound := env.StartWorker(t, "key-a", "a-1")
	s := &session{t: t, env: env, windows: map[string]string{}, client: newClient(t),
		id: env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })}
	s.openWindow("b1") // binds the response to a-1, the only worker of key-a
	if s.url != bound.ProxyURL() {
		t.Fatalf("MINDROOM_AGENT_CLI_URL %q, want a-1's proxy %q", s.url, bound.ProxyURL())
	}
	sibling := env.StartWorker(t, "key-a", "a-2")
	stranger := env.StartWorker(t, "key-b", "b-1")
	local := open(t, env)

	t.Run("ItsWorkersProxyServesIt", func(t *testing.T) {
		s.ok(s.post(`{"operation":"tools.list","limit":1}`))
		rc := s.call("test", "echo", `{"via":"a-1"}`)
		if done := s.await(rc.CallID); done.Status != "completed" || done.Parent != "b1" {
			t.Fatalf("receipt %s", done.raw)
		}
	})
	for _, tc := range []struct {
		name   string
		origin string
	}{
		{"LoopbackListenerRefusesIt", env.AgentCLIURL},
		{"AnotherWorkerOfTheSameKeyRefusesIt", sibling.ProxyURL()},
		{"AWorkerOfAnotherKeyRefusesIt", stranger.ProxyURL()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireUnauthorized(t, s.post(`{"operation":"tools.list"}`, via(tc.origin)))
			requireUnauthorized(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`), via(tc.origin)))
			requireUnauthorized(t, s.get(uuid.NewString(), "", via(tc.origin)))
		})
	}
	t.Run("EveryProxyRefusesALocalGrant", func(t *testing.T) {
		for _, origin := range []string{bound.ProxyURL(), sibling.ProxyURL(), stranger.ProxyURL()} {
			requireUnauthorized(t, local.post(`{"operation":"tools.list"}`, via(origin)))
		}
		local.ok(local.post(`{"operation":"tools.list","limit":1}`))
	})
}
