package responseapi

import (
	"context"
	"errors"
	"google.golang.org/protobuf/types/known/timestamppb"
	"log/slog"
	"sync"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/response"
)

// Server implements ResponseService.
type Server struct {
	responsev1.UnimplementedResponseServiceServer
	responses  *response.Manager
	preflight  Preflight
	log        *slog.Logger
	stopThread ThreadStopper
	shellModes ShellModes
	mcpPath    string
}

// Config is what the ResponseService handlers need; every field but Logger is required.
type Config struct {
	Responses *response.Manager
	// Preflight checks the agent's shell before a response opens in the minimal shell mode the
	// request names.
	Preflight Preflight
	// ShellModes is where OpenResponse finds the mode of a request that names none.
	ShellModes ShellModes
	// StopThread is what StopThread does.
	StopThread ThreadStopper
	// MCPPath is the path of the gateway MCP endpoint, told to the runtime with each
	// response's MCP credential.
	MCPPath string
	Logger  *slog.Logger
}

// NewServer returns the ResponseService handlers.
func NewServer(cfg Config) (*Server, error) {
	switch {
	case cfg.Responses == nil:
		return nil, errors.New("responseapi: Config.Responses is required")
	case cfg.Preflight == nil:
		return nil, errors.New("responseapi: Config.Preflight is required")
	case cfg.ShellModes == nil:
		return nil, errors.New("responseapi: Config.ShellModes is required")
	case cfg.StopThread == nil:
		return nil, errors.New("responseapi: Config.StopThread is required")
	case cfg.MCPPath == "":
		return nil, errors.New("responseapi: Config.MCPPath is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{responses: cfg.Responses, preflight: cfg.Preflight, shellModes: cfg.ShellModes, stopThread: cfg.StopThread, mcpPath: cfg.MCPPath, log: cfg.Logger}, nil
}

// MaxCommandBytes is the longest command RunBash takes: Linux refuses a longer single argument
// (MAX_ARG_STRLEN, 128 KiB with its terminating NUL), so `bash -c` could not run it anyway.
const MaxCommandBytes = 128*1024 - 1

var (
	errNoResponse = fault.New(fault.NotFound, "no open response has this id")
	errNoWindow   = fault.New(fault.NotFound, "no window has this bash_call_id")
)

func (s *Server) get(id string) (*response.Response, error) {
	r, ok := s.responses.Get(id)
	if !ok {
		return nil, errNoResponse
	}
	return r, nil
}

// engineErr is an engine's error as the runtime sees it: the response closing while the
// request was in it (its grant revoked) is the same NOT_FOUND as a response never opened.
// Every other error keeps its kind.
func engineErr(err error) error {
	if response.ErrClosed(err) || errors.Is(err, clierr.ErrUnauthenticated) {
		return errNoResponse
	}
	return err
}

// OpenResponse opens a response.
func (s *Server) OpenResponse(ctx context.Context, req *responsev1.OpenResponseRequest) (*responsev1.OpenResponseResponse, error) {
	mode, err := s.shellMode(ctx, req)
	if err != nil {
		return nil, err
	}
	spec := response.Spec{
		Agent:         req.GetAgentName(),
		Requester:     req.GetRequesterId(),
		Channel:       req.GetConversation().GetChannel(),
		Thread:        req.GetConversation().GetThread(),
		ShellMode:     mode,
		WorkerKey:     req.GetWorkerKey(),
		Flags:         req.GetFlags(),
		Origin:        originFromProto[req.GetOrigin()],
		Toolkits:      req.GetToolkits(),
		GrantLifetime: req.GetGrantLifetime().AsDuration(),
	}
	for _, d := range req.GetContextDocuments() {
		spec.ContextDocuments = append(spec.ContextDocuments, response.Document{Name: d.GetName(), Text: d.GetText()})
	}
	if err := s.responses.CheckPlacement(spec.WorkerKey); err != nil {
		return nil, engineErr(err) // before the preflight, which would prepare a local shell
	}
	if req.GetShellMode() == responsev1.ShellMode_SHELL_MODE_MINIMAL {
		if err := s.checkMinimal(ctx, spec); err != nil {
			return nil, err
		}
	}
	var opts []response.OpenOption
	if key := credentialKey(ctx); key != "" {
		opts = append(opts, response.ByCredential(key))
	}
	r, err := s.responses.Open(spec, opts...)
	if err != nil {
		return nil, engineErr(err)
	}
	mcpToken, err := r.MintMCPCredential()
	if err != nil { // only a response closed already (CloseResponse raced the open)
		return nil, engineErr(err)
	}
	return &responsev1.OpenResponseResponse{
		ResponseId:     r.ID(),
		GrantExpiresAt: timestamppb.New(r.GrantExpires()),
		McpPath:        s.mcpPath,
		McpToken:       mcpToken,
	}, nil
}

// RunBash runs a command and streams its output, then its result.
func (s *Server) RunBash(req *responsev1.RunBashRequest, stream responsev1.ResponseService_RunBashServer) error {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return err
	}
	if req.GetCommand() == "" || len(req.GetCommand()) > MaxCommandBytes {
		return fault.Newf(fault.InvalidArgument, "command must be 1 to %d bytes (Bash takes no longer -c argument; put longer scripts in a file)", MaxCommandBytes)
	}
	// Output is sent from the command's reader goroutines; gRPC streams take one sender at a
	// time. A failed send (the runtime went away) cancels the command.
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	var sendMu sync.Mutex
	out := func(st bashexec.Stream, chunk []byte) {
		sendMu.Lock()
		defer sendMu.Unlock()
		if ctx.Err() != nil {
			return
		}
		msg := &responsev1.RunBashResponse{Event: &responsev1.RunBashResponse_Output{Output: &responsev1.OutputChunk{
			Stream: outputStream(st), Data: append([]byte(nil), chunk...),
		}}}
		if err := stream.Send(msg); err != nil {
			cancel()
		}
	}
	res, receipts, err := r.RunBash(ctx, req.GetBashCallId(), req.GetCommand(), req.GetTimeout().AsDuration(), out,
		response.WithCheckpoint(req.GetCheckpoint()))
	var runErr string
	if err != nil {
		if fe := (*fault.Error)(nil); errors.As(err, &fe) || response.ErrClosed(err) {
			return engineErr(err) // a bad request, not a command that failed to start
		}
		runErr = err.Error()
	}
	result := &responsev1.BashResult{
		ExitCode:  int32(res.ExitCode),
		TimedOut:  res.TimedOut,
		Cancelled: res.Cancelled,
		Receipts:  receiptsToProto(receipts),
		Error:     runErr,
		EndsTurn:  response.EndsTurn(receipts),
	}
	if runErr != "" {
		result.ExitCode = -1
	}
	sendMu.Lock()
	defer sendMu.Unlock()
	return stream.Send(&responsev1.RunBashResponse{Event: &responsev1.RunBashResponse_Result{Result: result}})
}

func outputStream(s bashexec.Stream) responsev1.OutputStream {
	if s == bashexec.Stderr {
		return responsev1.OutputStream_OUTPUT_STREAM_STDERR
	}
	return responsev1.OutputStream_OUTPUT_STREAM_STDOUT
}

// OpenWindow opens a window for a runtime-run shell.
func (s *Server) OpenWindow(_ context.Context, req *responsev1.OpenWindowRequest) (*responsev1.OpenWindowResponse, error) {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return nil, err
	}
	w, err := r.OpenWindow(req.GetBashCallId())
	if err != nil {
		return nil, engineErr(err)
	}
	env, err := r.AgentCLIEnv(w)
	if err != nil {
		return nil, fault.New(fault.Unavailable, err.Error())
	}
	return &responsev1.OpenWindowResponse{Environment: env}, nil
}

// CloseWindow drains and closes a runtime-run shell's window.
func (s *Server) CloseWindow(_ context.Context, req *responsev1.CloseWindowRequest) (*responsev1.CloseWindowResponse, error) {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return nil, err
	}
	w, ok := r.WindowByBashCallID(req.GetBashCallId())
	if !ok {
		return nil, errNoWindow
	}
	receipts := r.DrainWindow(w)
	return &responsev1.CloseWindowResponse{Receipts: receiptsToProto(receipts), EndsTurn: response.EndsTurn(receipts)}, nil
}

// GetWindow reports a window as it stands, without waiting.
func (s *Server) GetWindow(_ context.Context, req *responsev1.GetWindowRequest) (*responsev1.GetWindowResponse, error) {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return nil, err
	}
	w, ok := r.WindowByBashCallID(req.GetBashCallId())
	if !ok {
		return nil, errNoWindow
	}
	v := r.ViewWindow(w)
	return &responsev1.GetWindowResponse{
		State: windowStateToProto[v.State], Unsettled: uint32(v.Unsettled), Receipts: receiptsToProto(v.Receipts),
	}, nil
}

var windowStateToProto = map[string]responsev1.WindowState{
	"open":     responsev1.WindowState_WINDOW_STATE_OPEN,
	"draining": responsev1.WindowState_WINDOW_STATE_DRAINING,
	"closed":   responsev1.WindowState_WINDOW_STATE_CLOSED,
}

// FenceResponse fences a response.
func (s *Server) FenceResponse(_ context.Context, req *responsev1.FenceResponseRequest) (*responsev1.FenceResponseResponse, error) {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return nil, err
	}
	r.Fence()
	return &responsev1.FenceResponseResponse{}, nil
}

// RetireCatalog retires a response's catalog.
func (s *Server) RetireCatalog(_ context.Context, req *responsev1.RetireCatalogRequest) (*responsev1.RetireCatalogResponse, error) {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return nil, err
	}
	r.RetireCatalog()
	return &responsev1.RetireCatalogResponse{}, nil
}

// RebindCatalog rebinds a response's catalog.
func (s *Server) RebindCatalog(_ context.Context, req *responsev1.RebindCatalogRequest) (*responsev1.RebindCatalogResponse, error) {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return nil, err
	}
	if err := r.RebindCatalog(req.GetToolkits()); err != nil {
		return nil, engineErr(err)
	}
	return &responsev1.RebindCatalogResponse{}, nil
}

// CloseResponse closes a response; closing an unknown or closed one succeeds.
func (s *Server) CloseResponse(_ context.Context, req *responsev1.CloseResponseRequest) (*responsev1.CloseResponseResponse, error) {
	if r, ok := s.responses.Get(req.GetResponseId()); ok {
		r.Close()
	}
	return &responsev1.CloseResponseResponse{}, nil
}

// originFromProto maps the wire origin; unspecified maps to "" (foreground by default).
var originFromProto = map[responsev1.Origin]string{
	responsev1.Origin_ORIGIN_FOREGROUND: response.OriginForeground,
	responsev1.Origin_ORIGIN_BACKGROUND: response.OriginBackground,
	responsev1.Origin_ORIGIN_SCHEDULED:  response.OriginScheduled,
	responsev1.Origin_ORIGIN_RECOVERY:   response.OriginRecovery,
	responsev1.Origin_ORIGIN_API:        response.OriginAPI,
}
