package primary

import (
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protojson"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/internal/agentclihttp"
	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/fault"
	imetrics "github.com/turncli/turncli/internal/metrics"
	"github.com/turncli/turncli/internal/readiness"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/api/dashboard"
	"github.com/turncli/turncli/primary/api/mcpgateway"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/lifecycle"
	"github.com/turncli/turncli/primary/metrics"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/roleauth"
	"github.com/turncli/turncli/primary/surfaces/links"
	"github.com/turncli/turncli/primary/surfaces/slack"
)

// gatewayDeps are what the HTTP handlers are built over.
type gatewayDeps struct {
	cfg Config
	// internal is the gRPC server's in-process listener, through which the gateway and the
	// dashboard call the APIs, interceptors included.
	internal      *bufconn.Listener
	localAgentCLI agentcliv1.AgentCLIServiceServer
	responses     *response.Manager
	failures      *authlimit.Limiter
	ready         *readiness.Checker
	policy        *roleauth.Policy
	operatorAuth  *operator.Authenticator
	metrics       *metrics.Metrics
	// slack serves Slack's interactivity requests; nil without the Slack surface.
	slack http.Handler
	// links serves the decision links' pages.
	links http.Handler
}

// gateway is the HTTP handlers of the two HTTP listeners.
type gateway struct {
	agentCLI http.Handler // the loopback Agent CLI listener's
	rest     http.Handler // the REST API's and the dashboard's
}

// buildGateway builds the Agent CLI handler, the REST gateway over the gRPC server and the
// dashboard beside it, registering the stops of what they hold on stops.
func buildGateway(ctx context.Context, d gatewayDeps, stops *lifecycle.Stops) (gateway, error) {
	log := d.cfg.Logger
	cliHandler, err := agentclihttp.NewServerHandler(ctx, d.localAgentCLI, func(_ context.Context, token string) bool {
		_, ok := d.responses.Authenticate(token, response.LocalPath)
		return ok
	}, agentclihttp.Faults{Log: log.With("component", "agentcli"), Owner: fault.PrimaryLog})
	if err != nil {
		return gateway{}, err
	}
	apiConn, err := grpc.NewClient("passthrough:///internal",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return d.internal.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	)
	if err != nil {
		return gateway{}, err
	}
	// Closed once the REST listener stopped (built after it), before the gRPC server stops.
	stops.Add(lifecycle.Servers, "gateway's gRPC connection", func(context.Context) error { return apiConn.Close() })
	// REST clients of the runtime API get snake_case JSON, the proto field names.
	// HttpBody responses (a job's log) go out as their raw bytes.
	apiMux := runtime.NewServeMux(runtime.WithErrorHandler(restErrors(log.With("component", "rest"))), runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{
		Marshaler: &runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		},
	}), runtime.WithMiddlewares(imetrics.GatewayRoutes()), runtime.WithIncomingHeaderMatcher(traceHeaders))
	if err := responsev1.RegisterResponseServiceHandler(ctx, apiMux, apiConn); err != nil {
		return gateway{}, err
	}
	if err := continuationv1.RegisterContinuationServiceHandler(ctx, apiMux, apiConn); err != nil {
		return gateway{}, err
	}
	if err := threadv1.RegisterThreadEventServiceHandler(ctx, apiMux, apiConn); err != nil {
		return gateway{}, err
	}
	if err := operatorv1.RegisterOperatorServiceHandler(ctx, apiMux, apiConn); err != nil {
		return gateway{}, err
	}
	// The dashboard shares the REST listener (same origin as the operator API) but not its
	// edge: it authenticates by its own session, then calls OperatorService over apiConn with
	// the signed-in operator's credential, so the server decides exactly as for curl.
	dash, err := dashboard.New(dashboard.Config{Operator: operatorv1.NewOperatorServiceClient(apiConn), Failures: d.failures,
		Now: d.cfg.Clock.Now, Logger: log.With("component", "dashboard")})
	if err != nil {
		return gateway{}, err
	}
	// A removed operator's sessions end, with their event streams, as soon as the
	// authenticator reads the removal: at the next call, or at the watch's next look.
	unsubscribe := d.operatorAuth.OnRevoked(dash.EndSessions)
	stops.Add(lifecycle.Servers, "dashboard session revocation", func(context.Context) error { unsubscribe(); return nil })
	mcpGateway, err := mcpgateway.New(mcpgateway.Config{Responses: d.responses, Failures: d.failures, Logger: log.With("component", "mcpgateway")})
	if err != nil {
		return gateway{}, err
	}
	// Like a local shell's Agent CLI calls, a gateway MCP call is recorded by its dispatch span,
	// which continues the engine's trace: no span of the listener's own per request.
	mcpHandler := telemetry.ContinueHTTP(mcpGateway)
	// Not a ServeMux: that would clean and redirect the API's paths, which reach the gateway
	// exactly as sent.
	dashHandler, edge := dash.Handler(), restEdge(apiMux, d.ready, d.policy, d.operatorAuth, d.failures)
	restMux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			// A person who opens the REST address in a browser wants the dashboard; no API
			// lives at the root, so nothing else is taken from anyone.
			http.Redirect(w, r, dashboard.Prefix, http.StatusFound)
			return
		}
		if strings.HasPrefix(r.URL.Path, dashboard.Prefix) {
			dashHandler.ServeHTTP(w, r)
			return
		}
		if d.slack != nil && r.URL.Path == slack.InteractionsPath {
			// Slack holds no credential of ours: each request is signed with the app's
			// signing secret instead, which the handler checks before it reads anything.
			d.slack.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == mcpgateway.Path {
			// A foreground engine holds one response's gateway MCP credential, no role's: the
			// gateway checks it before it reads anything, as the REST edge checks a role's.
			imetrics.RecordRoute(r, mcpgateway.Path)
			mcpHandler.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, links.Prefix) {
			// A link's holder has no credential of ours either: the link itself is signed,
			// and the handler checks it before it reads anything else.
			d.links.ServeHTTP(w, r)
			return
		}
		edge.ServeHTTP(w, r)
	})
	// A local shell's calls reach the engine straight from its loopback: the call's dispatch
	// span, a child of the shell's Bash span, is the primary's record of it, so the listener
	// only continues the trace and spends no span of its own per request.
	cliHandler = telemetry.ContinueHTTP(cliHandler)
	return gateway{
		agentCLI: d.metrics.HTTP.Static("agent_cli", agentclihttp.Route, cliHandler),
		rest:     d.metrics.HTTP.Routed("api", restMux),
	}, nil
}

// traceHeaders forwards a REST request's W3C trace context to the gRPC server behind the
// gateway, as metadata its stats handler continues, besides the gateway's default headers.
func traceHeaders(key string) (string, bool) {
	switch k := strings.ToLower(key); k {
	case telemetry.TraceparentKey, telemetry.TracestateKey:
		return k, true
	}
	return runtime.DefaultHeaderMatcher(key)
}
