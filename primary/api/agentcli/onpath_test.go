package agentcli_test

import (
	"context"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	"github.com/turncli/turncli/primary/api/agentcli"
	"github.com/turncli/turncli/primary/response"
)

// OnPath is how the loopback listener reaches the handlers, with no gRPC server in between: it
// must give what a gRPC server with PathInterceptor gives.
func TestOnPathServesAsAGRPCServerOnThatPathWould(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	rc := s.call("test", "echo", `{}`)
	s.await(rc.CallID)
	cli := agentcli.NewServer(env.Primary.Internals().Responses, nil)
	incoming := func(ctx context.Context) context.Context {
		return metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", "Bearer "+s.grant))
	}

	for _, tc := range []struct {
		name string
		path response.Path
		want codes.Code
	}{
		{"ItsPathAcceptsTheGrantOfThatPath", response.LocalPath, codes.OK},
		{"AnotherPathRefusesIt", response.Path{WorkerID: "worker-1"}, codes.Unauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cli.OnPath(tc.path).GetCall(incoming(t.Context()), &agentcliv1.GetCallRequest{CallId: rc.CallID})
			requireCode(t, err, tc.want)
			_, err = cli.OnPath(tc.path).Operate(incoming(t.Context()), &agentcliv1.OperateRequest{OperationJson: []byte(`{"operation":"tools.list"}`)})
			requireCode(t, err, tc.want)
		})
	}
	t.Run("ARequestWhoseContextEndedIsNotStarted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(incoming(t.Context()))
		cancel()
		_, err := cli.OnPath(response.LocalPath).GetCall(ctx, &agentcliv1.GetCallRequest{CallId: rc.CallID})
		requireCode(t, err, codes.Canceled)
		_, err = cli.OnPath(response.LocalPath).Operate(ctx, &agentcliv1.OperateRequest{OperationJson: []byte(`{"operation":"tools.list"}`)})
		requireCode(t, err, codes.Canceled)
	})
	// The gateway turns a Grpc-Timeout header into the request's deadline. A deadline that has
	// passed before the handler runs fails the request, as a gRPC client fails a call it would
	// start past its deadline, even for a read that never waits.
	t.Run("ADeadlinePassedOnArrivalIsTheInternalErrorOverREST", func(t *testing.T) {
		r := s.get(rc.CallID, "", header("Grpc-Timeout", "1n"))
		requireStatus(t, r, http.StatusInternalServerError, "Agent CLI internal error (id ")
		requireStatus(t, r, http.StatusInternalServerError, "); see the primary's log")
	})
}
