package agentcli

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	"github.com/turncli/turncli/internal/agentclihttp"
	"github.com/turncli/turncli/internal/bearer"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/fieldrule"
	"github.com/turncli/turncli/primary/response"
)

// MaxWait is the longest long-poll a GetCall may ask for.
const MaxWait = 60 * time.Second

// Server implements AgentCLIService over a response manager.
type Server struct {
	agentcliv1.UnimplementedAgentCLIServiceServer
	responses *response.Manager
	log       *slog.Logger
	observer  Observer
}

// Observer hears of every Agent CLI request as it is answered, for measurements (the
// primary's metrics). It runs on the request's path: it must be quick.
type Observer interface {
	// Operation reports one request: its kind (an operation name such as "tools.call",
	// "calls.get" for a receipt read, KindUnknown when the request was refused before its
	// operation was read) and its error, nil when it succeeded.
	Operation(kind string, err error)
}

// KindUnknown is the kind of a request refused before its operation was known.
const KindUnknown = "unknown"

// CallsGet is the kind of a receipt read (GET …/calls/{id}).
const CallsGet = "calls.get"

type noObserver struct{}

func (noObserver) Operation(string, error) {}

// Option sets something about a Server.
type Option func(*Server)

// WithObserver makes o hear of every request.
func WithObserver(o Observer) Option { return func(s *Server) { s.observer = o } }

// NewServer returns the AgentCLIService handlers.
func NewServer(responses *response.Manager, log *slog.Logger, opts ...Option) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{responses: responses, log: log, observer: noObserver{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// PathInterceptor marks every request of a gRPC server as arriving on path p.
func PathInterceptor(p response.Path) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(response.WithPath(ctx, p), req)
	}
}

// OnPath returns the handlers as a caller in the same process reaches them (the loopback
// listener's gateway calls them directly, with no gRPC server and so no interceptor between):
// every request arrives on path p, as PathInterceptor(p) would mark it, its errors are mapped
// to statuses by faultgrpc.Status, as the fault interceptor would map them, and one whose
// context has already ended is not started, as a gRPC client starts no call past its deadline.
func (s *Server) OnPath(p response.Path) agentcliv1.AgentCLIServiceServer {
	return onPath{s: s, path: p}
}

type onPath struct {
	agentcliv1.UnimplementedAgentCLIServiceServer
	s    *Server
	path response.Path
}

func (o onPath) Operate(ctx context.Context, req *agentcliv1.OperateRequest) (*agentcliv1.OperateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, o.status(ctx, agentcliv1.AgentCLIService_Operate_FullMethodName, err)
	}
	resp, err := o.s.Operate(response.WithPath(ctx, o.path), req)
	if err != nil {
		return nil, o.status(ctx, agentcliv1.AgentCLIService_Operate_FullMethodName, err)
	}
	return resp, nil
}

func (o onPath) GetCall(ctx context.Context, req *agentcliv1.GetCallRequest) (*agentcliv1.GetCallResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, o.status(ctx, agentcliv1.AgentCLIService_GetCall_FullMethodName, err)
	}
	resp, err := o.s.GetCall(response.WithPath(ctx, o.path), req)
	if err != nil {
		return nil, o.status(ctx, agentcliv1.AgentCLIService_GetCall_FullMethodName, err)
	}
	return resp, nil
}

// status maps err as the gRPC server's fault interceptor would, since none runs on this path.
func (o onPath) status(ctx context.Context, method string, err error) error {
	return faultgrpc.Status(ctx, o.s.log, method, err)
}

// authenticate finds the caller's response from the bearer grant in ctx's metadata.
func (s *Server) authenticate(ctx context.Context) (*response.Response, error) {
	p, ok := response.PathFrom(ctx)
	if !ok {
		return nil, clierr.ErrUnauthenticated
	}
	token, ok := bearer.FromIncomingContext(ctx)
	if !ok {
		return nil, clierr.ErrUnauthenticated
	}
	r, ok := s.responses.Authenticate(token, p)
	if !ok {
		return nil, clierr.ErrUnauthenticated
	}
	return r, nil
}

func windowOf(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(agentclihttp.WindowHeader); len(v) == 1 {
		return v[0]
	}
	return ""
}

// Operate runs one Agent CLI operation.
func (s *Server) Operate(ctx context.Context, req *agentcliv1.OperateRequest) (*agentcliv1.OperateResponse, error) {
	kind := KindUnknown
	body, err := s.operateRequest(ctx, req, &kind)
	s.observer.Operation(kind, err)
	if err != nil {
		return nil, err
	}
	return &agentcliv1.OperateResponse{CanonicalJson: body}, nil
}

// operateRequest authenticates and runs the operation of req, setting *kind once it is read.
func (s *Server) operateRequest(ctx context.Context, req *agentcliv1.OperateRequest, kind *string) ([]byte, error) {
	r, err := s.authenticate(ctx)
	if err != nil {
		return nil, err
	}
	if len(req.GetOperationJson()) > agentclihttp.MaxOperationBytes {
		return nil, fault.New(fault.TooLarge, clierr.RequestTooLarge)
	}
	op, err := parseOperation(req.GetOperationJson())
	if err != nil {
		return nil, err
	}
	*kind = op.name // one of the names parseOperation admits
	return s.operate(ctx, r, op)
}

func (s *Server) operate(ctx context.Context, r *response.Response, op *operation) ([]byte, error) {
	switch op.name {
	case "tools.list":
		return r.ListTools(op.cursor, op.limit)
	case "tools.search":
		return r.SearchTools(op.query, op.toolkit, op.limit)
	case "tools.describe":
		return r.Describe(ctx, windowOf(ctx), op.toolkit, op.function)
	case "tools.call":
		return r.Call(ctx, windowOf(ctx), response.CallRequest{
			ID: op.callID, Toolkit: op.toolkit, Function: op.function, Arguments: op.args,
		})
	case "context.list":
		return r.ContextList(op.cursor, op.limit)
	default: // context.read; parseOperation admits nothing else
		return r.ContextRead(op.docName, op.offset, op.limit)
	}
}

// GetCall returns a receipt, long-polling when asked.
func (s *Server) GetCall(ctx context.Context, req *agentcliv1.GetCallRequest) (*agentcliv1.GetCallResponse, error) {
	body, err := s.getCall(ctx, req)
	s.observer.Operation(CallsGet, err)
	if err != nil {
		return nil, err
	}
	return &agentcliv1.GetCallResponse{CanonicalJson: body}, nil
}

func (s *Server) getCall(ctx context.Context, req *agentcliv1.GetCallRequest) ([]byte, error) {
	r, err := s.authenticate(ctx)
	if err != nil {
		return nil, err
	}
	// The rule of a call id is fieldrule's; the Agent CLI answers a malformed one as unknown.
	if !fieldrule.Valid(fieldrule.CallID, req.GetCallId()) {
		return nil, clierr.ErrUnauthenticated
	}
	id, err := uuid.Parse(req.GetCallId())
	if err != nil {
		return nil, clierr.ErrUnauthenticated
	}
	// The receipt is looked up before the wait is judged: a call the caller cannot see is the
	// uniform 401 whatever else the request says.
	if !r.HasCall(id) {
		return nil, clierr.ErrUnauthenticated
	}
	wait, err := parseWait(req.GetWait())
	if err != nil {
		return nil, err
	}
	return r.GetCall(ctx, id, wait)
}

// parseWait reads the long-poll time: empty for none, else decimal seconds from 0 to 60.
func parseWait(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > MaxWait.Seconds() || strings.ContainsAny(s, "xXpPnNiI_") {
		return 0, invalid("wait must be a number of seconds from 0 to 60")
	}
	return time.Duration(f * float64(time.Second)), nil
}
