package primary

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/enumcheck"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/fieldrule"
	"github.com/turncli/turncli/primary/api/agentcli"
	"github.com/turncli/turncli/primary/api/continuationapi"
	"github.com/turncli/turncli/primary/api/mcpgateway"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/api/responseapi"
	"github.com/turncli/turncli/primary/api/threadapi"
	"github.com/turncli/turncli/primary/continuation"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/metrics"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/roleauth"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/surfaces/links"
	"github.com/turncli/turncli/primary/threadfeed"
	"github.com/turncli/turncli/primary/toolhost"
	"github.com/turncli/turncli/primary/workerhub"
)

// apiDeps are the engines and credentials the API adapters are built over.
type apiDeps struct {
	cfg           Config
	store         store.Store
	secrets       *secrets.Registry
	metrics       *metrics.Metrics
	failures      *authlimit.Limiter
	runtimeToken  string
	operatorAuth  *operator.Authenticator
	health        *health.Server
	preflight     *shellmode.Preflight
	responses     *response.Manager
	workers       *workerhub.Hub
	jobs          *jobs.Manager
	interaction   *interaction.Service
	toolHosts     *toolhost.Service
	continuations *continuation.Outbox
	threadFeed    *threadfeed.Feed
	links         *links.Minter
	events        *events.Bus
}

// apis are the API adapters' server and what the rest of the assembly needs of them.
type apis struct {
	grpc     *grpc.Server     // public APIs, role-authorised
	operator *operator.Server // OperatorService; Close ends its event watches
	policy   *roleauth.Policy // which role may call which service; the REST edge asks it too
	// localAgentCLI is the Agent CLI handlers as the loopback listener's gateway calls them,
	// in this process, every request marked as arriving on the primary's local path.
	localAgentCLI agentcliv1.AgentCLIServiceServer
}

// buildAPIs builds the API adapters over the engines New built, and the public gRPC server
// that serves them: the runtime's API, the workers' connection, the operators' API, and the
// Agent CLI calls workers' sandbox proxies forward (marked with the worker's identity by the
// hub).
func buildAPIs(d apiDeps) (apis, error) {
	log := d.cfg.Logger
	preflight := d.preflight
	workerAPI, err := workerhub.NewService(workerhub.ServiceConfig{Hub: d.workers, Jobs: d.jobs, Grants: d.responses})
	if err != nil {
		return apis{}, fmt.Errorf("worker api: %w", err)
	}
	questions := d.interaction.Questions
	responseAPI, err := responseapi.NewServer(responseapi.Config{
		Responses: d.responses, Preflight: preflight, ShellModes: d.store,
		StopThread: func(ctx context.Context, channel, thread string) (int, error) {
			cancelled, err := questions.CancelThreadQuestions(ctx, channel, thread)
			return len(cancelled), err
		},
		MCPPath: mcpgateway.Path,
		Logger:  log.With("component", "responseapi"),
	})
	if err != nil {
		return apis{}, fmt.Errorf("response api: %w", err)
	}
	operatorAPI, err := operator.NewServer(operator.Config{
		Store: d.store, Jobs: d.jobs, Approvals: d.interaction.Background, Prompts: d.interaction.Prompts, Allowances: d.store,
		Questions: d.interaction.Questions, Progress: d.interaction.Progress, Responses: d.responses, Events: d.events,
		CallApprovals: d.responses.CallApprovals(), Workers: d.workers, ShellModes: d.store, ShellPreflight: preflight,
		IdentityLinks: d.store,
		Logger:        log.With("component", "operatorapi"),
	})
	if err != nil {
		return apis{}, fmt.Errorf("operator api: %w", err)
	}
	cli := agentcli.NewServer(d.responses, log.With("component", "agentcli"), agentcli.WithObserver(d.metrics))

	policy := roleauth.NewPolicy().
		Service(responsev1.ResponseService_ServiceDesc.ServiceName, roleauth.Runtime).
		Service(workerv1.WorkerService_ServiceDesc.ServiceName, roleauth.SelfAuthenticated).
		Service(toolhostv1.ToolHostService_ServiceDesc.ServiceName, roleauth.Runtime).
		Service(continuationv1.ContinuationService_ServiceDesc.ServiceName, roleauth.Runtime).
		Service(threadv1.ThreadEventService_ServiceDesc.ServiceName, roleauth.Runtime).
		Service(agentcliv1.AgentCLIService_ServiceDesc.ServiceName, roleauth.SelfAuthenticated).
		Service(healthpb.Health_ServiceDesc.ServiceName, roleauth.Public).
		Service(operatorv1.OperatorService_ServiceDesc.ServiceName, roleauth.SelfAuthenticated). // by operatorAuth
		Credential(roleauth.Runtime, d.runtimeToken)
	faults := log.With("component", "grpc")
	server := grpc.NewServer(append(d.cfg.Connections.grpcOptions(),
		// Metrics outermost, so they count the status the caller gets. Faults next: every error
		// below it, the authenticators' included, becomes its one status there. Redaction
		// innermost: it sees each response as its handler returns it. Only what people read is
		// redacted; the runtime's and workers' APIs carry grants on purpose.
		// The two bearer authenticators are each wrapped by the limit on refused credentials,
		// which counts only what they refuse themselves, after checking the credential.
		grpc.ChainUnaryInterceptor(d.metrics.GRPC.UnaryServerInterceptor(), faultgrpc.UnaryServerInterceptor(faults),
			d.failures.UnaryServerInterceptor(policy.UnaryInterceptor()), d.workers.AgentCLIInterceptor(),
			d.failures.UnaryServerInterceptor(d.operatorAuth.UnaryInterceptor()), enumcheck.UnaryInterceptor(), fieldrule.UnaryInterceptor(),
			d.secrets.UnaryServerInterceptor(redactedServices...)),
		grpc.ChainStreamInterceptor(d.metrics.GRPC.StreamServerInterceptor(), faultgrpc.StreamServerInterceptor(faults),
			d.failures.StreamServerInterceptor(policy.StreamInterceptor()), d.failures.StreamServerInterceptor(d.operatorAuth.StreamInterceptor()),
			enumcheck.StreamInterceptor(), fieldrule.StreamInterceptor(), d.secrets.StreamServerInterceptor(redactedServices...)),
		// Each RPC continues the trace its caller's traceparent names (REST calls' included:
		// the gateway forwards the header as metadata).
		grpc.StatsHandler(d.cfg.Telemetry.GRPCServerHandler()),
	)...)
	responsev1.RegisterResponseServiceServer(server, responseAPI)
	workerv1.RegisterWorkerServiceServer(server, workerAPI)
	toolhostv1.RegisterToolHostServiceServer(server, d.toolHosts)
	continuationv1.RegisterContinuationServiceServer(server, continuationapi.NewServer(d.continuations, 0, log.With("component", "continuations")))
	threadv1.RegisterThreadEventServiceServer(server, threadapi.NewServer(d.threadFeed, d.links, log.With("component", "threadapi")))
	operatorv1.RegisterOperatorServiceServer(server, operatorAPI)
	healthpb.RegisterHealthServer(server, d.health)
	agentcliv1.RegisterAgentCLIServiceServer(server, cli)
	d.metrics.GRPC.Register(server)

	// The loopback listener's gateway calls the Agent CLI handlers directly, with no gRPC hop
	// between: OnPath marks each request as arriving on the primary's local path, all that an
	// interceptor did on this route; the handlers check the grant themselves.
	return apis{grpc: server, operator: operatorAPI, policy: policy, localAgentCLI: cli.OnPath(response.LocalPath)}, nil
}

// redactedServices are the services whose responses are redacted of live secrets: people read
// them (the operator API, continuations, which are posted to conversations, and the thread
// feed, whose items are shown there; the feed redacts each text whole before cutting it into
// chunks, so no secret escapes by straddling two).
var redactedServices = []string{
	operatorv1.OperatorService_ServiceDesc.ServiceName,
	continuationv1.ContinuationService_ServiceDesc.ServiceName,
	threadv1.ThreadEventService_ServiceDesc.ServiceName,
}
