package workerhub_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// grantOf opens a window in response id and returns its environment (which binds a worker to a
// worker-keyed response).
func grantOf(t testing.TB, env *testenv.Env, id, bashCallID string) map[string]string {
	t.Helper()
	w, err := env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: id, BashCallId: bashCallID})
	if err != nil {
		t.Fatalf("OpenWindow: %v", err)
	}
	return w.GetEnvironment()
}

// TestGrantIsUsableOnlyThroughTheWorkerItsResponseIsBoundTo covers both ways a worker's proxy
// reaches the primary: the pre-body CheckGrant and the forwarded AgentCLIService call, which
// the hub's interceptor marks with the calling worker's identity.
func TestHubGrantIsUsableOnlyThroughTheWorkerItsResponseIsBoundTo(t *testing.T) {
	env := testenv.Start(t)
	credA, credB := testenv.WorkerCredential("key-a"), testenv.WorkerCredential("key-b")
	startFake(t, env, "key-a", "a1")
	bound := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })
	// a1 is the only worker of key-a now, so the response binds to it.
	workerGrant := grantOf(t, env, bound, "w")["MINDROOM_AGENT_CLI_TOKEN"]
	startFake(t, env, "key-a", "a2")
	startFake(t, env, "key-b", "b1")
	localGrant := grantOf(t, env, env.Open(t), "l")["MINDROOM_AGENT_CLI_TOKEN"]

	conn := dialPrimary(t, env)
	workers := workerv1.NewWorkerServiceClient(conn)
	cli := agentcliv1.NewAgentCLIServiceClient(conn)
	cases := []struct {
		name       string
		credential string
		id         string
		grant      string
		want       codes.Code
	}{
		{"GrantThroughItsOwnWorkerIsAccepted", credA, "a1", workerGrant, codes.OK},
		{"GrantThroughOtherWorkerOfTheSameKeyIsRejected", credA, "a2", workerGrant, codes.Unauthenticated},
		{"GrantThroughWorkerOfAnotherKeyIsRejected", credB, "b1", workerGrant, codes.Unauthenticated},
		{"CredentialOfAnotherKeyClaimingTheBoundIDIsRejected", credB, "a1", workerGrant, codes.Unauthenticated},
		{"GrantThroughAWorkerThatIsNotConnectedIsRejected", credA, "a9", workerGrant, codes.Unauthenticated},
		{"LocalResponseGrantThroughAWorkerIsRejected", credA, "a1", localGrant, codes.Unauthenticated},
		{"UnknownGrantIsRejected", credA, "a1", "no-such-grant", codes.Unauthenticated},
		{"EmptyGrantIsRejected", credA, "a1", "", codes.Unauthenticated},
		{"NoWorkerCredentialIsRejected", "", "a1", workerGrant, codes.Unauthenticated},
		{"WrongWorkerCredentialIsRejected", "forged", "a1", workerGrant, codes.Unauthenticated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := asWorker(deadline(t), tc.credential, tc.id)
			_, err := workers.CheckGrant(ctx, &workerv1.CheckGrantRequest{Grant: tc.grant})
			if got := status.Code(err); got != tc.want {
				t.Errorf("CheckGrant: %v, want %v", err, tc.want)
			}
			fwd := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tc.grant)
			res, err := cli.Operate(fwd, &agentcliv1.OperateRequest{OperationJson: []byte(`{"operation":"tools.list","limit":1}`)})
			if got := status.Code(err); got != tc.want {
				t.Errorf("forwarded Operate: %v, want %v", err, tc.want)
			}
			if tc.want == codes.OK && len(res.GetCanonicalJson()) == 0 {
				t.Errorf("forwarded Operate returned no body")
			}
			if msg := status.Convert(err).Message(); tc.want == codes.Unauthenticated && msg != "Agent CLI authority is unavailable" {
				t.Errorf("forwarded Operate message = %q, want the uniform one", msg)
			}
		})
	}
}
