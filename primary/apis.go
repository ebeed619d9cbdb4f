package primary

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/test/bufconn"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/enumcheck"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/fieldrule"
	"github.com/turncli/turncli/primary/api/agentcli"
	"github.com/turncli/turncli/primary/api/continuationapi"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/api/responseapi"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/roleauth"
	"github.com/turncli/turncli/primary/workerhub"
)

// buildAPIs builds the API adapters over the engines New built, and the public gRPC server
// that serves them: the runtime's API, the workers' connection, the operators' API, and the
// Agent CLI calls workers' sandbox proxies forward (marked with the worker's identity by the
// hub).
func (p *Primary) buildAPIs() error {
	log := p.cfg.Logger
	preflight := p.preflight
	workerAPI, err := workerhub.NewService(workerhub.ServiceConfig{Hub: p.Workers, Jobs: p.Jobs, Grants: p.Responses})
	if err != nil {
		return fmt.Errorf("worker api: %w", err)
	}
	questions := p.Interaction.Questions
	responseAPI, err := responseapi.NewServer(responseapi.Config{
		Responses: p.Responses, Preflight: preflight, ShellModes: p.Store,
		StopThread: func(ctx context.Context, channel, thread string) (int, error) {
			cancelled, err := questions.CancelThreadQuestions(ctx, channel, thread)
			return len(cancelled), err
		},
		Logger: log.With("component", "responseapi"),
	})
	if err != nil {
		return fmt.Errorf("response api: %w", err)
	}
	p.operatorAPI, err = operator.NewServer(operator.Config{
		Store: p.Store, Jobs: p.Jobs, Approvals: p.Interaction.Background, Prompts: p.Interaction.Prompts, Allowances: p.Store,
		Questions: p.Interaction.Questions, Progress: p.Interaction.Progress, Responses: p.Responses, Events: p.Events,
		CallApprovals: p.Responses.CallApprovals(), Workers: p.Workers, ShellModes: p.Store, ShellPreflight: preflight,
		Logger: log.With("component", "operatorapi"),
	})
	if err != nil {
		return fmt.Errorf("operator api: %w", err)
	}
	cli := agentcli.NewServer(p.Responses, log.With("component", "agentcli"), agentcli.WithObserver(p.metrics))

	p.policy = roleauth.NewPolicy().
		Service(responsev1.ResponseService_ServiceDesc.ServiceName, roleauth.Runtime).
		Service(workerv1.WorkerService_ServiceDesc.ServiceName, roleauth.SelfAuthenticated).
		Service(toolhostv1.ToolHostService_ServiceDesc.ServiceName, roleauth.Runtime).
		Service(continuationv1.ContinuationService_ServiceDesc.ServiceName, roleauth.Runtime).
		Service(agentcliv1.AgentCLIService_ServiceDesc.ServiceName, roleauth.SelfAuthenticated).
		Service(healthpb.Health_ServiceDesc.ServiceName, roleauth.Public).
		Service(operatorv1.OperatorService_ServiceDesc.ServiceName, roleauth.SelfAuthenticated). // by operatorAuth
		Credential(roleauth.Runtime, p.runtimeToken)
	faults := log.With("component", "grpc")
	p.grpcServer = grpc.NewServer(append(p.cfg.Connections.grpcOptions(),
		// Metrics outermost, so they count the status the caller gets. Faults next: every error
		// below it, the authenticators' included, becomes its one status there. Redaction
		// innermost: it sees each response as its handler returns it. Only what people read is
		// redacted; the runtime's and workers' APIs carry grants on purpose.
		// The two bearer authenticators are each wrapped by the limit on refused credentials,
		// which counts only what they refuse themselves, after checking the credential.
		grpc.ChainUnaryInterceptor(p.metrics.GRPC.UnaryServerInterceptor(), faultgrpc.UnaryServerInterceptor(faults),
			p.failures.UnaryServerInterceptor(p.policy.UnaryInterceptor()), p.Workers.AgentCLIInterceptor(),
			p.failures.UnaryServerInterceptor(p.operatorAuth.UnaryInterceptor()), enumcheck.UnaryInterceptor(), fieldrule.UnaryInterceptor(),
			p.Secrets.UnaryServerInterceptor(redactedServices...)),
		grpc.ChainStreamInterceptor(p.metrics.GRPC.StreamServerInterceptor(), faultgrpc.StreamServerInterceptor(faults),
			p.failures.StreamServerInterceptor(p.policy.StreamInterceptor()), p.failures.StreamServerInterceptor(p.operatorAuth.StreamInterceptor()),
			enumcheck.StreamInterceptor(), fieldrule.StreamInterceptor(), p.Secrets.StreamServerInterceptor(redactedServices...)),
		// Each RPC continues the trace its caller's traceparent names (REST calls' included:
		// the gateway forwards the header as metadata).
		grpc.StatsHandler(p.cfg.Telemetry.GRPCServerHandler()),
	)...)
	responsev1.RegisterResponseServiceServer(p.grpcServer, responseAPI)
	workerv1.RegisterWorkerServiceServer(p.grpcServer, workerAPI)
	toolhostv1.RegisterToolHostServiceServer(p.grpcServer, p.ToolHosts)
	continuationv1.RegisterContinuationServiceServer(p.grpcServer, continuationapi.NewServer(p.Continuations, 0, log.With("component", "continuations")))
	operatorv1.RegisterOperatorServiceServer(p.grpcServer, p.operatorAPI)
	p.health = health.NewServer()
	healthpb.RegisterHealthServer(p.grpcServer, p.health)
	agentcliv1.RegisterAgentCLIServiceServer(p.grpcServer, cli)
	p.metrics.GRPC.Register(p.grpcServer)

	// The loopback listener's gateway calls the Agent CLI handlers directly, with no gRPC hop
	// between: OnPath marks each request as arriving on the primary's local path, all that an
	// interceptor did on this route; the handlers check the grant themselves.
	p.localAgentCLI = cli.OnPath(response.LocalPath)
	p.internalGRPC = bufconn.Listen(1 << 20)
	return nil
}
