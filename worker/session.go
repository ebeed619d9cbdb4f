package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/durationpb"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/telemetry"
)

// session is one connection to the primary and the commands started on it. When it ends, its
// commands are stopped: nobody is left to receive their output. Background jobs are not
// stopped: worker/jobs keeps them and reports them on the next connection.
type session struct {
	w      *Worker
	stream workerv1.WorkerService_ConnectClient
	sendMu sync.Mutex

	mu       sync.Mutex
	commands map[string]*command
	wg       sync.WaitGroup
}

// command is one running command and its output credit.
type command struct {
	cancel context.CancelFunc
	credit chan struct{} // one token per output chunk the primary allows
}

// session connects, says Hello, and serves the primary's messages until the stream ends.
// welcomed reports whether the primary accepted the worker.
func (w *Worker) session(ctx context.Context) (welcomed bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := w.client.Connect(ctx)
	if err != nil {
		return false, err
	}
	s := &session{w: w, stream: stream, commands: make(map[string]*command)}
	js, held := w.jobs.Connect(s.send)
	defer func() {
		cancel() // a streamer blocked in Send returns once the stream is gone
		js.Close()
	}()
	err = s.send(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Hello{Hello: &workerv1.Hello{
		WorkerId: w.cfg.ID, WorkerKey: w.cfg.Key, Capacity: uint32(w.cfg.Capacity), AgentCliUrl: w.ProxyURL(),
		Jobs: held, DefaultTimeout: durationpb.New(w.cfg.Shells.DefaultTimeout), MaxTimeout: durationpb.New(w.cfg.Shells.MaxTimeout),
		AnswersPing: true,
	}}})
	// io.EOF from Send means the primary has already ended the stream, for example refusing
	// the credential before the Hello arrived: its status, which says why, comes from Recv.
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	first, err := stream.Recv()
	if err != nil {
		return false, err
	}
	if first.GetWelcome() == nil {
		return false, errors.New("primary did not welcome the worker")
	}
	w.cfg.Logger.Info("connected to primary", append([]any{"primary", w.conn.Addr(), "session", first.GetWelcome().GetSessionId(), "jobs", len(held)},
		w.outage.Connected()...)...)
	w.metrics.connected.Set()
	defer w.metrics.connected.Clear()
	js.Open()
	defer s.stopAll(cancel)
	for {
		msg, err := stream.Recv()
		if err != nil {
			return true, err
		}
		switch ev := msg.GetEvent().(type) {
		case *workerv1.ConnectResponse_Start:
			s.start(ctx, ev.Start)
		case *workerv1.ConnectResponse_Cancel:
			s.cancel(ev.Cancel.GetCommandId())
		case *workerv1.ConnectResponse_Credit:
			s.addCredit(ev.Credit.GetCommandId(), int(ev.Credit.GetChunks()))
		case *workerv1.ConnectResponse_StartJob:
			js.Start(ev.StartJob)
		case *workerv1.ConnectResponse_CancelJob:
			js.Cancel(ev.CancelJob.GetJobId())
		case *workerv1.ConnectResponse_AttachJob:
			js.Attach(ev.AttachJob.GetJobId(), ev.AttachJob.GetLogOffset())
		case *workerv1.ConnectResponse_AckJob:
			js.Ack(ev.AckJob.GetJobId())
		case *workerv1.ConnectResponse_Ping:
			// Answered on the receive loop, not by a goroutine: a Pong shows the primary that
			// this loop, which everything the primary asks depends on, is running.
			if err := s.send(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Pong{Pong: &workerv1.Pong{Nonce: ev.Ping.GetNonce()}}}); err != nil {
				return true, err
			}
		case *workerv1.ConnectResponse_ReleaseResponse:
			// Off the receive loop (ending a sandbox waits for its processes), but counted, so
			// the session does not end before the release does.
			id := ev.ReleaseResponse.GetResponseId()
			s.wg.Go(func() { s.w.shells.Release(id) })
		}
	}
}

func (s *session) send(msg *workerv1.ConnectRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.stream.Send(msg)
}

// stopAll cancels every command of the session and waits for them to exit.
func (s *session) stopAll(cancel context.CancelFunc) {
	cancel()
	s.wg.Wait()
	// The primary releases responses over the connection; without one, none can be released
	// later, so their sandboxes end with it.
	s.w.shells.Close()
}

func (s *session) start(ctx context.Context, start *workerv1.StartCommand) {
	id := start.GetCommandId()
	s.mu.Lock()
	if _, dup := s.commands[id]; dup {
		s.mu.Unlock()
		return
	}
	if c := s.w.cfg.Capacity; c > 0 && len(s.commands) >= c {
		s.mu.Unlock()
		_ = s.send(exited(id, bashexec.Result{}, fmt.Errorf("worker %s is at capacity (%d commands)", s.w.cfg.ID, c)))
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	credit := max(int(start.GetOutputCredit()), 1)
	cmd := &command{cancel: cancel, credit: make(chan struct{}, credit)}
	for range credit {
		cmd.credit <- struct{}{}
	}
	s.commands[id] = cmd
	s.wg.Add(1)
	s.mu.Unlock()
	s.w.metrics.inFlight.Add(1)

	go func() {
		defer s.wg.Done()
		defer cancel()
		out := func(st bashexec.Stream, chunk []byte) {
			select {
			case <-cmd.credit:
			case <-ctx.Done():
				return // cancelled: the primary stops reading; keep the pipe moving
			}
			stream := workerv1.OutputStream_OUTPUT_STREAM_STDOUT
			if st == bashexec.Stderr {
				stream = workerv1.OutputStream_OUTPUT_STREAM_STDERR
			}
			_ = s.send(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Output{Output: &workerv1.CommandOutput{
				CommandId: id, Stream: stream, Data: append([]byte(nil), chunk...),
			}}})
		}
		// The command continues the trace of the primary's span of it; its shell gets this
		// span's context.
		ctx, span := s.w.tracer.Start(telemetry.Extract(ctx, start.GetTraceparent(), start.GetTracestate()), "bash",
			trace.WithAttributes(attribute.String("turncli.worker_id", s.w.cfg.ID)))
		res, err := s.w.shells.Run(ctx, shellhost.Command{
			Response: start.GetResponseId(), Agent: start.GetAgent(), Command: start.GetCommand(), Timeout: start.GetTimeout().AsDuration(),
			AgentCLIEnv: agentCLIEnv(start.GetAgentCliEnv()),
		}, out)
		span.SetAttributes(attribute.Int("turncli.exit_code", res.ExitCode))
		span.End()
		s.mu.Lock()
		delete(s.commands, id)
		s.mu.Unlock()
		s.w.metrics.inFlight.Add(-1)
		_ = s.send(exited(id, res, err))
	}()
}

// agentCLIEnv keeps only the two variables the primary may set; the URL is the worker's own.
func agentCLIEnv(in map[string]string) map[string]string {
	out := make(map[string]string, 2)
	for _, k := range []string{"MINDROOM_AGENT_CLI_TOKEN", "MINDROOM_AGENT_CLI_WINDOW"} {
		if v, ok := in[k]; ok {
			out[k] = v
		}
	}
	return out
}

func exited(id string, res bashexec.Result, err error) *workerv1.ConnectRequest {
	ex := &workerv1.CommandExited{CommandId: id, ExitCode: int32(res.ExitCode), TimedOut: res.TimedOut, Cancelled: res.Cancelled}
	if err != nil {
		ex.Error = err.Error()
	}
	return &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Exited{Exited: ex}}
}

func (s *session) cancel(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.commands[id]; c != nil {
		c.cancel()
	}
}

func (s *session) addCredit(id string, n int) {
	s.mu.Lock()
	c := s.commands[id]
	s.mu.Unlock()
	if c == nil {
		return
	}
	for range n {
		select {
		case c.credit <- struct{}{}:
		default:
			return // never more than the initial credit outstanding
		}
	}
}
