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
		case <-giveUp:
			return bashexec.Result{Cancelled: true}, fmt.Errorf("worker %s did not report the cancelled command's exit", c.ident.ID)
		case <-c.gone:
			deliverQueued() // output received before the connection ended is not lost
			return bashexec.Result{}, fmt.Errorf("worker %s disconnected while the command was running; it may or may not have finished", c.ident.ID)
		}
	}
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
