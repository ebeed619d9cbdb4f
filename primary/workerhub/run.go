package workerhub

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/response"
)

// maxWorkerErrorBytes bounds the error text a worker reports for a command.
const maxWorkerErrorBytes = 1024

// creditBatch is how many delivered chunks are returned to the worker in one Credit.
const creditBatch = 8

// Run runs a command of a worker-keyed response on its worker and relays its output. It
// returns an error when no worker can run it, or when the worker goes away before reporting
// the command's exit.
func (h *Hub) Run(ctx context.Context, cmd response.ShellCommand, out bashexec.Output) (bashexec.Result, error) {
	credit := h.cfg.OutputCredit
	rc := &remoteCommand{
		id:     strconv.FormatUint(h.nextCmd.Add(1), 10),
		chunks: make(chan chunk, credit),
		exited: make(chan *workerv1.CommandExited, 1),
	}
	c, err := h.pick(cmd.WorkerKey, cmd.Binding, rc)
	if err != nil {
		return bashexec.Result{}, err
	}
	defer c.forget(rc.id)
	traceparent, tracestate := telemetry.Inject(ctx) // the worker continues the command's trace
	err = c.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Start{Start: &workerv1.StartCommand{
		CommandId: rc.id, ResponseId: cmd.ResponseID, Agent: cmd.Agent, Command: cmd.Command, Timeout: durationpb.New(cmd.Timeout),
		AgentCliEnv: cmd.AgentCLIEnv, OutputCredit: uint32(credit), Traceparent: traceparent, Tracestate: tracestate,
	}}})
	if err != nil {
		return bashexec.Result{}, fmt.Errorf("worker %s could not be reached: %w", c.ident.ID, err)
	}

	delivered := 0
	batch := min(creditBatch, credit) // a credit below the batch must still be returned
	deliver := func(ch chunk) {
		s := bashexec.Stdout
		if ch.stream == workerv1.OutputStream_OUTPUT_STREAM_STDERR {
			s = bashexec.Stderr
		}
		out(s, ch.data)
		if delivered++; delivered%batch == 0 {
			_ = c.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Credit{Credit: &workerv1.Credit{CommandId: rc.id, Chunks: uint32(batch)}}})
		}
	}
	// deliverQueued delivers the output the receive loop queued before the exit or the end of
	// the connection.
	deliverQueued := func() {
		for {
			select {
			case ch := <-rc.chunks:
				deliver(ch)
			default:
				return
			}
		}
	}
	done := ctx.Done()
	var giveUp <-chan time.Time
	// The deadline the worker applies, kept here as well: a worker that stops answering must
	// not hold a command past it. At the deadline the worker is pinged; if it has not been
	// heard from a slack later, the command ends here as timed out.
	var deadline, checkAlive <-chan time.Time
	var pingedAt time.Duration
	overdue := false // giveUp bounds the wait for an overdue command's exit, not a cancelled one's
	endOverdue := func(why string) (bashexec.Result, error) {
		deliverQueued()
		_ = c.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Cancel{Cancel: &workerv1.CancelCommand{CommandId: rc.id}}})
		h.cfg.Logger.Warn("command ended as timed out by the primary", "reason", why, "worker_id", c.ident.ID, "command_id", rc.id)
		return bashexec.Result{ExitCode: timedOutExitCode, TimedOut: true}, nil
	}
	if d := c.deadline(cmd.Timeout); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		deadline = t.C
	}
	for {
		select {
		case ch := <-rc.chunks:
			deliver(ch)
		case ex := <-rc.exited:
			deliverQueued() // output sent before the exit is already queued
			if msg := ex.GetError(); msg != "" {
				if len(msg) > maxWorkerErrorBytes {
					msg = strings.ToValidUTF8(msg[:maxWorkerErrorBytes], "") + "…"
				}
				return bashexec.Result{}, errors.New(msg)
			}
			return bashexec.Result{ExitCode: int(ex.GetExitCode()), TimedOut: ex.GetTimedOut(), Cancelled: ex.GetCancelled()}, nil
		case <-done:
			done = nil // ask once, then wait (bounded) for the worker to report the exit
			giveUp = time.After(commandGrace)
			_ = c.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Cancel{Cancel: &workerv1.CancelCommand{CommandId: rc.id}}})
		case <-deadline:
			deadline = nil
			pingedAt = c.sinceAccepted()
			_ = c.ping()
			checkAlive = time.After(h.cfg.Liveness.DeadlineSlack)
		case <-checkAlive:
			checkAlive = nil
			if c.heardSince(pingedAt) {
				// Alive, so ending the command itself (TERM, its grace, KILL): ask again
				// later, and wait no longer than a cancelled command may take.
				deadline = time.After(h.cfg.Liveness.Interval)
				if giveUp == nil {
					giveUp, overdue = time.After(commandGrace), true
				}
				continue
			}
			return endOverdue("the worker was silent past the deadline")
		case <-giveUp:
			if overdue {
				return endOverdue("the worker did not report the exit in time")
			}
			return bashexec.Result{Cancelled: true}, fmt.Errorf("worker %s did not report the cancelled command's exit", c.ident.ID)
		case <-c.gone:
			deliverQueued() // output received before the connection ended is not lost
			if c.away.Load() {
				return bashexec.Result{}, fmt.Errorf("worker %s stopped answering while the command was running; it may or may not have finished", c.ident.ID)
			}
			return bashexec.Result{}, fmt.Errorf("worker %s disconnected while the command was running; it may or may not have finished", c.ident.ID)
		}
	}
}

// timedOutExitCode is the exit code of a command the primary ends at its deadline because its
// worker is silent: that of a command killed with SIGKILL, which is what the worker does to it
// when it runs again.
const timedOutExitCode = 128 + 9

// deadline is how long after its start the worker ends a command that asked for timeout, as
// the worker's Hello describes its limits; zero when the worker did not say, or does not
// answer pings (the primary could then not tell silent from busy).
func (c *conn) deadline(timeout time.Duration) time.Duration {
	if !c.answersPing {
		return 0
	}
	if timeout <= 0 {
		timeout = c.defaultTimeout
	}
	if c.maxTimeout > 0 && timeout > c.maxTimeout {
		timeout = c.maxTimeout
	}
	return timeout
}

// Release tells the worker a response's commands ran on that the response has closed, so the
// worker ends the response's sandbox. A worker no longer connected has ended it with the
// connection; a send that fails means the same.
func (h *Hub) Release(b *response.Binding, responseID string) {
	id := b.WorkerID()
	if id == "" {
		return
	}
	h.mu.Lock()
	c := h.byID[id]
	h.mu.Unlock()
	if c == nil {
		return
	}
	_ = c.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_ReleaseResponse{
		ReleaseResponse: &workerv1.ReleaseResponse{ResponseId: responseID},
	}})
}
