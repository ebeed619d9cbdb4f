package toolhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/catalog"
)

// Why a connection ended, as the cause of its context.
var (
	errProtocol  = errors.New("tool host protocol violation")
	errReplaced  = errors.New("replaced by a newer stream of the same tool host")
	errStopping  = fault.New(fault.Unavailable, "the primary is stopping")
	errNotRead   = errors.New("the tool host is not reading its stream")
	errConnEnded = errors.New("stream ended")
)

// conn is one connected tool host: the messages waiting to be sent to it, and the calls and
// loads waiting for its answers.
type conn struct {
	svc     *Service
	hostID  string
	session string
	log     *slog.Logger
	// ctx ends when the connection does (its stream ended, it was replaced, it stopped reading,
	// the primary is stopping); its cause says which. Waiters treat it as "the host is gone".
	ctx    context.Context
	cancel context.CancelCauseFunc
	// out is drained by the stream's handler, the only sender.
	out    chan *toolhostv1.ConnectResponse
	nextID atomic.Uint64

	mu       sync.Mutex
	draining bool
	calls    map[string]*pendingCall
	loads    map[string]chan *toolhostv1.ToolkitLoaded
}

// pendingCall is a call sent to the host and not yet answered.
type pendingCall struct {
	toolkit  string
	progress catalog.Progress
	done     chan callOutcome // room for the one outcome
}

type callOutcome struct {
	res catalog.Result
	err error
}

func (c *conn) newID(prefix string) string {
	return prefix + strconv.FormatUint(c.nextID.Add(1), 10)
}

// enqueue queues msg for the host, waiting for room until ctx ends or the connection does.
func (c *conn) enqueue(ctx context.Context, msg *toolhostv1.ConnectResponse) error {
	select {
	case c.out <- msg:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return errConnEnded
	}
}

// enqueueNow queues msg without waiting: a host whose queue is full has stopped reading and is
// disconnected, so a caller that must return promptly (a cancelled call) never blocks.
func (c *conn) enqueueNow(msg *toolhostv1.ConnectResponse) {
	select {
	case c.out <- msg:
	case <-c.ctx.Done():
	default:
		c.cancel(errNotRead)
	}
}

func (c *conn) setDraining() {
	c.mu.Lock()
	c.draining = true
	c.mu.Unlock()
}

func (c *conn) isDraining() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.draining
}

// call sends one call to the host and waits for its result, for ctx to end (the host is told
// to cancel, and the call returns at once), or for the connection to end.
func (c *conn) call(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	argsJSON, err := canonjson.Marshal(args)
	if err != nil {
		return catalog.Result{}, catalog.ErrInvalidArguments
	}
	id := c.newID("call-")
	pc := &pendingCall{toolkit: call.Toolkit, progress: call.Progress, done: make(chan callOutcome, 1)}
	c.mu.Lock()
	c.calls[id] = pc
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
	}()

	traceparent, tracestate := telemetry.Inject(ctx) // the host continues the dispatch's trace
	start := &toolhostv1.ConnectResponse{Event: &toolhostv1.ConnectResponse_Call{Call: &toolhostv1.StartCall{
		CallId: id, Toolkit: call.Toolkit, Function: call.Function, ArgumentsJson: string(argsJSON),
		Identity: identityToProto(call.Identity), AgentCliCallId: call.ID, BashCallId: call.BashCallID,
		Traceparent: traceparent, Tracestate: tracestate,
	}}}
	if err := c.enqueue(ctx, start); err != nil {
		if ctx.Err() != nil {
			return catalog.Result{}, ctx.Err() // never sent: nothing to cancel
		}
		return catalog.Result{}, unavailable(call.Toolkit, whyDisconnected)
	}
	select {
	case out := <-pc.done:
		return out.res, out.err
	case <-ctx.Done():
		c.enqueueNow(&toolhostv1.ConnectResponse{Event: &toolhostv1.ConnectResponse_Cancel{Cancel: &toolhostv1.CancelCall{CallId: id}}})
		return catalog.Result{}, ctx.Err()
	case <-c.ctx.Done():
		return catalog.Result{}, unavailable(call.Toolkit, whyDisconnected)
	}
}

// load asks the host for a deferred toolkit's definition, waiting at most the load timeout.
func (c *conn) load(ctx context.Context, toolkit string) (catalog.Definition, error) {
	id := c.newID("load-")
	answer := make(chan *toolhostv1.ToolkitLoaded, 1)
	c.mu.Lock()
	c.loads[id] = answer
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.loads, id)
		c.mu.Unlock()
	}()
	timeout := c.svc.cfg.LoadTimeout
	lctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("its tool host did not send the definition within %s", timeout))
	defer cancel()
	req := &toolhostv1.ConnectResponse{Event: &toolhostv1.ConnectResponse_Load{Load: &toolhostv1.LoadToolkit{LoadId: id, Name: toolkit}}}
	if err := c.enqueue(lctx, req); err != nil {
		if lctx.Err() != nil {
			return catalog.Definition{}, context.Cause(lctx)
		}
		return catalog.Definition{}, unavailable(toolkit, whyDisconnected)
	}
	select {
	case loaded := <-answer:
		if def := loaded.GetDefinition(); def != nil {
			return definitionFromProto(def), nil
		}
		if msg := loaded.GetError(); msg != "" {
			return catalog.Definition{}, errors.New(msg)
		}
		return catalog.Definition{}, errors.New("its tool host sent neither a definition nor an error")
	case <-lctx.Done():
		return catalog.Definition{}, context.Cause(lctx)
	case <-c.ctx.Done():
		return catalog.Definition{}, unavailable(toolkit, whyDisconnected)
	}
}

// receive handles the host's messages, in order, until the stream ends or the host breaks the
// protocol. recv is the stream's Recv.
func (c *conn) receive(recv func() (*toolhostv1.ConnectRequest, error)) error {
	for {
		msg, err := recv()
		if err != nil {
			return err
		}
		switch ev := msg.GetEvent().(type) {
		case *toolhostv1.ConnectRequest_Register:
			reply := c.svc.register(c, ev.Register)
			if err := c.enqueue(c.ctx, &toolhostv1.ConnectResponse{Event: &toolhostv1.ConnectResponse_Registered{Registered: reply}}); err != nil {
				return err
			}
		case *toolhostv1.ConnectRequest_Loaded:
			c.mu.Lock()
			answer := c.loads[ev.Loaded.GetLoadId()]
			delete(c.loads, ev.Loaded.GetLoadId())
			c.mu.Unlock()
			if answer != nil {
				answer <- ev.Loaded
			}
		case *toolhostv1.ConnectRequest_Progress:
			if err := c.progress(ev.Progress); err != nil {
				return err
			}
		case *toolhostv1.ConnectRequest_Result:
			c.result(ev.Result)
		case *toolhostv1.ConnectRequest_Drain:
			c.svc.drain(c)
		case *toolhostv1.ConnectRequest_Hello:
			return fmt.Errorf("%w: hello sent twice", errProtocol)
		default:
			return fmt.Errorf("%w: unknown message", errProtocol)
		}
	}
}

func (c *conn) progress(p *toolhostv1.CallProgress) error {
	c.mu.Lock()
	pc := c.calls[p.GetCallId()]
	c.mu.Unlock()
	switch p.GetState() {
	case toolhostv1.CallState_CALL_STATE_RUNNING:
		if pc != nil && pc.progress != nil {
			pc.progress.Running()
		}
	case toolhostv1.CallState_CALL_STATE_WAITING:
		if pc != nil && pc.progress != nil {
			pc.progress.Waiting()
		}
	default:
		return fmt.Errorf("%w: progress state must be RUNNING or WAITING", errProtocol)
	}
	return nil
}

func (c *conn) result(r *toolhostv1.CallResult) {
	c.mu.Lock()
	pc := c.calls[r.GetCallId()]
	delete(c.calls, r.GetCallId())
	c.mu.Unlock()
	if pc == nil {
		return // cancelled, or not a call of this stream
	}
	res, err := resultFromProto(r)
	if err != nil && r.GetError() == "" {
		c.log.Warn("tool host sent an unusable result", "toolkit", pc.toolkit, "err", err)
	}
	pc.done <- callOutcome{res: res, err: err}
}
