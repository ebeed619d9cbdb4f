package hostkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	"github.com/turncli/turncli/internal/outage"
	"github.com/turncli/turncli/internal/telemetry"
)

// closeGrace bounds how long a draining host waits for the primary to end the stream after
// the host closed its side.
const closeGrace = 5 * time.Second

// session is one stream to the primary and the calls running on it. When the stream ends, its
// calls are cancelled: nobody is left to receive their results.
type session struct {
	h      *Host
	stream toolhostv1.ToolHostService_ConnectClient
	log    *slog.Logger
	tracer trace.Tracer
	// callsCtx is the parent of every call's context; cancelCalls ends them all.
	callsCtx    context.Context
	cancelCalls context.CancelFunc

	sendMu     sync.Mutex
	sendClosed bool

	mu       sync.Mutex
	draining bool
	calls    map[string]context.CancelFunc
	wg       sync.WaitGroup // running call handlers
	acks     int            // toolkits the primary has registered
}

// session connects, says hello, registers the toolkits, and serves the primary's messages until
// the stream ends (an error) or ctx ends (a drain, then nil). registered reports whether every
// toolkit was registered on this stream.
func (h *Host) session(ctx context.Context, client toolhostv1.ToolHostServiceClient, tracer trace.Tracer, lost *outage.Log) (registered bool, err error) {
	// The stream outlives ctx by the drain: it is cancelled only when this session returns.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stream, err := client.Connect(sctx)
	if err != nil {
		return false, err
	}
	// Until the handshake is done there is nothing to drain: stopping abandons the stream.
	handshaking := context.AfterFunc(ctx, cancel)
	callsCtx, cancelCalls := context.WithCancel(sctx)
	s := &session{h: h, stream: stream, log: h.cfg.Logger, tracer: tracer, callsCtx: callsCtx, cancelCalls: cancelCalls, calls: make(map[string]context.CancelFunc)}
	defer s.stopCalls()

	if err := s.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Hello{Hello: &toolhostv1.Hello{HostId: h.cfg.HostID}}}); err != nil {
		return false, recvErr(stream, err)
	}
	first, err := stream.Recv()
	if err != nil {
		return false, err
	}
	welcome := first.GetWelcome()
	if welcome == nil {
		return false, errors.New("hostkit: the primary did not answer hello with welcome")
	}
	s.log = h.cfg.Logger.With("session", welcome.GetSessionId())
	s.log.Info("connected to primary", lost.Connected()...)
	for _, tk := range h.toolkits {
		if err := s.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Register{Register: tk.register}}); err != nil {
			return false, recvErr(stream, err)
		}
	}

	if !handshaking() {
		return false, ctx.Err()
	}
	if len(h.toolkits) == 0 && h.cfg.OnRegistered != nil {
		h.cfg.OnRegistered(welcome.GetSessionId())
	}

	received := make(chan error, 1)
	go func() { received <- s.receive(welcome.GetSessionId()) }()
	select {
	case err := <-received:
		return s.registered(), err
	case <-ctx.Done():
		return s.registered(), s.drain(cancel, received)
	}
}

// recvErr turns a failed Send into the stream's real status, which only Recv reports.
func recvErr(stream toolhostv1.ToolHostService_ConnectClient, sendErr error) error {
	if !errors.Is(sendErr, io.EOF) {
		return sendErr
	}
	for {
		if _, err := stream.Recv(); err != nil {
			return err
		}
	}
}

func (s *session) send(msg *toolhostv1.ConnectRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.sendClosed {
		return io.EOF
	}
	return s.stream.Send(msg)
}

func (s *session) registered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acks == len(s.h.toolkits)
}

// receive handles the primary's messages until the stream ends or a toolkit is refused.
func (s *session) receive(sessionID string) error {
	for {
		msg, err := s.stream.Recv()
		if err != nil {
			return err
		}
		switch ev := msg.GetEvent().(type) {
		case *toolhostv1.ConnectResponse_Registered:
			if ev.Registered.GetRejection() != nil {
				return registrationError(ev.Registered)
			}
			s.mu.Lock()
			s.acks++
			all := s.acks == len(s.h.toolkits)
			s.mu.Unlock()
			if all {
				s.log.Info("toolkits registered", "count", len(s.h.toolkits))
				if f := s.h.cfg.OnRegistered; f != nil {
					f(sessionID)
				}
			}
		case *toolhostv1.ConnectResponse_Load:
			s.load(ev.Load)
		case *toolhostv1.ConnectResponse_Call:
			s.start(ev.Call)
		case *toolhostv1.ConnectResponse_Cancel:
			s.mu.Lock()
			cancel := s.calls[ev.Cancel.GetCallId()]
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	}
}

// load answers a LoadToolkit with the toolkit's definition.
func (s *session) load(req *toolhostv1.LoadToolkit) {
	out := &toolhostv1.ToolkitLoaded{LoadId: req.GetLoadId()}
	if tk := s.h.byName[req.GetName()]; tk != nil {
		out.Outcome = &toolhostv1.ToolkitLoaded_Definition{Definition: tk.def}
	} else {
		out.Outcome = &toolhostv1.ToolkitLoaded_Error{Error: fmt.Sprintf("this tool host has no toolkit %q", req.GetName())}
	}
	_ = s.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Loaded{Loaded: out}})
}

// start runs a call in its own goroutine; a draining session refuses it.
func (s *session) start(req *toolhostv1.StartCall) {
	fail := func(msg string) {
		_ = s.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Result{Result: &toolhostv1.CallResult{
			CallId: req.GetCallId(), Outcome: &toolhostv1.CallResult_Error{Error: msg},
		}}})
	}
	tk := s.h.byName[req.GetToolkit()]
	if tk == nil {
		fail(fmt.Sprintf("this tool host has no toolkit %q", req.GetToolkit()))
		return
	}
	fn, ok := tk.funcs[req.GetFunction()]
	if !ok {
		fail(fmt.Sprintf("toolkit %q has no function %q", req.GetToolkit(), req.GetFunction()))
		return
	}
	ctx, cancel := context.WithCancel(s.callsCtx)
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		cancel()
		fail(fmt.Sprintf("Toolkit %q is unavailable: its tool host is stopping", req.GetToolkit()))
		return
	}
	s.calls[req.GetCallId()] = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	go s.run(ctx, cancel, req, fn)
}

func (s *session) run(ctx context.Context, cancel context.CancelFunc, req *toolhostv1.StartCall, fn Function) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.calls, req.GetCallId())
		s.mu.Unlock()
		cancel()
	}()
	id := req.GetIdentity()
	state := &callState{id: req.GetCallId(), send: s.send}
	call := Call{
		ID: req.GetCallId(), AgentCLICallID: req.GetAgentCliCallId(), Toolkit: req.GetToolkit(), Function: req.GetFunction(),
		Identity: Identity{
			ResponseID: id.GetResponseId(), Agent: id.GetAgentName(), Requester: id.GetRequesterId(),
			Channel: id.GetConversation().GetChannel(), Thread: id.GetConversation().GetThread(),
		},
		BashCallID: req.GetBashCallId(),
		state:      state,
	}
	// The call continues the trace of the primary's dispatch of it.
	ctx, span := s.tracer.Start(telemetry.Extract(ctx, req.GetTraceparent(), req.GetTracestate()),
		"tool "+req.GetToolkit()+"."+req.GetFunction(), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("turncli.host_id", s.h.cfg.HostID), attribute.String("turncli.call_id", req.GetAgentCliCallId())))
	defer span.End()
	value, err := invoke(ctx, fn, call, json.RawMessage(req.GetArgumentsJson()))
	attachments := state.finish()
	result := &toolhostv1.CallResult{CallId: req.GetCallId()}
	if err == nil {
		var data []byte
		if data, err = json.Marshal(value); err != nil {
			err = fmt.Errorf("the tool's result cannot be written as JSON: %v", err)
		} else {
			result.Outcome = &toolhostv1.CallResult_ValueJson{ValueJson: string(data)}
			for _, a := range attachments {
				result.Attachments = append(result.Attachments, &toolhostv1.Attachment{
					Kind: attachmentKinds[a.Kind], MimeType: a.MimeType, Name: a.Name, Uri: a.URI, Size: a.Size,
				})
			}
		}
	}
	if err == nil && proto.Size(result) > maxResultBytes {
		// Sent, it would exceed the primary's message limit and end the whole stream, failing
		// every call of this host; fail just this one.
		result.Attachments = nil
		err = fmt.Errorf("the tool's result is %d bytes, over the %d a result may take", proto.Size(result), maxResultBytes)
	}
	if err != nil {
		msg := err.Error()
		if msg == "" {
			msg = "the tool failed"
		}
		result.Outcome = &toolhostv1.CallResult_Error{Error: msg}
		span.SetStatus(codes.Error, msg)
	}
	_ = s.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Result{Result: result}})
}

// maxResultBytes keeps a result message under gRPC's default 4 MiB receive limit, with room for
// the envelope. The primary shortens outcomes to 16 KiB anyway.
const maxResultBytes = 4<<20 - 64<<10

// invoke runs the handler; a panic fails the call instead of the host.
func invoke(ctx context.Context, fn Function, call Call, args json.RawMessage) (value any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the tool panicked: %v", r)
		}
	}()
	return fn.Handler(ctx, call, args)
}

// stopCalls cancels every running call and waits for the handlers to return.
func (s *session) stopCalls() {
	s.mu.Lock()
	s.draining = true // no call starts after this
	s.mu.Unlock()
	s.cancelCalls()
	s.wg.Wait()
}

// drain stops the session gracefully: tell the primary, let running calls finish within the
// grace period, close the host's side, and wait for the primary to end the stream.
func (s *session) drain(cancelStream context.CancelFunc, received <-chan error) error {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	s.log.Info("draining")
	_ = s.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Drain{Drain: &toolhostv1.Drain{}}})

	finished := make(chan struct{})
	go func() { s.wg.Wait(); close(finished) }()
	grace := time.NewTimer(s.h.cfg.StopGrace)
	defer grace.Stop()
	select {
	case <-finished:
	case <-grace.C:
		s.log.Warn("calls still running after the stop grace; cancelling them")
		s.cancelCalls()
		<-finished
	case err := <-received: // the stream ended first: the calls' results have nowhere to go
		s.cancelCalls()
		<-finished
		s.log.Warn("stream ended while draining", "err", err)
		return nil
	}

	s.sendMu.Lock()
	s.sendClosed = true
	_ = s.stream.CloseSend()
	s.sendMu.Unlock()
	closed := time.NewTimer(closeGrace)
	defer closed.Stop()
	var streamErr error
	select {
	case streamErr = <-received:
	case <-closed.C:
		cancelStream()
		streamErr = <-received
	}
	if !errors.Is(streamErr, io.EOF) {
		s.log.Warn("stream ended uncleanly while draining", "err", streamErr)
		return nil
	}
	s.log.Info("drained")
	return nil
}
