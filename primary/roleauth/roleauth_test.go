package roleauth

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/turncli/turncli/internal/faultgrpc"
)

func TestAuthorize(t *testing.T) {
	p := NewPolicy().
		Service("turncli.response.v1.ResponseService", Runtime).
		Service("turncli.operator.v1.OperatorService", Operator).
		Service("turncli.worker.v1.WorkerService", SelfAuthenticated).
		Service("grpc.health.v1.Health", Public).
		Credential(Runtime, "runtime-secret").
		Credential(Operator, "operator-secret")
	const runtimeMethod = "/turncli.response.v1.ResponseService/OpenResponse"
	const operatorMethod = "/turncli.operator.v1.OperatorService/ListJobs"
	withAuth := func(values ...string) context.Context {
		md := metadata.MD{}
		for _, v := range values {
			md.Append("authorization", v)
		}
		return metadata.NewIncomingContext(context.Background(), md)
	}
	tests := []struct {
		name   string
		ctx    context.Context
		method string
		want   codes.Code
	}{
		{"RuntimeCredentialOpensRuntimeAPI", withAuth("Bearer runtime-secret"), runtimeMethod, codes.OK},
		{"OperatorCredentialIsNotARuntimeCredential", withAuth("Bearer operator-secret"), runtimeMethod, codes.Unauthenticated},
		{"RuntimeCredentialIsNotAnOperatorCredential", withAuth("Bearer runtime-secret"), operatorMethod, codes.Unauthenticated},
		{"MissingCredentialIsRefused", withAuth(), runtimeMethod, codes.Unauthenticated},
		{"TwoCredentialsAreRefused", withAuth("Bearer runtime-secret", "Bearer runtime-secret"), runtimeMethod, codes.Unauthenticated},
		{"LowerCaseSchemeIsRefused", withAuth("bearer runtime-secret"), runtimeMethod, codes.Unauthenticated},
		{"PrefixOfTheSecretIsRefused", withAuth("Bearer runtime-secre"), runtimeMethod, codes.Unauthenticated},
		{"UnknownServiceIsNotExposed", withAuth("Bearer runtime-secret"), "/turncli.secret.v1.Secret/Get", codes.PermissionDenied},
		{"SelfAuthenticatedServicePassesToItsHandler", withAuth(), "/turncli.worker.v1.WorkerService/Connect", codes.OK},
		{"HealthIsPublic", withAuth(), "/grpc.health.v1.Health/Check", codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := status.Code(faultgrpc.Status(tt.ctx, nil, tt.method, p.authorize(tt.ctx, tt.method))); got != tt.want {
				t.Errorf("code = %v, want %v", got, tt.want)
			}
		})
	}
}
