package workerhub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/workerhub"
)

// quickLiveness finds a silent worker within a second, so the tests below end quickly.
func quickLiveness() testenv.Option {
	return testenv.WithConfig(func(c *primary.Config) {
		c.Workers.Liveness = workerhub.Liveness{Interval: 100 * time.Millisecond, Timeout: time.Second, DeadlineSlack: 200 * time.Millisecond}
	})
}

// pinging is a Hello of a worker that answers pings, with its timeouts.
func pinging(defaultTimeout, maxTimeout time.Duration) func(*workerv1.Hello) {
	return func(h *workerv1.Hello) {
		h.AnswersPing, h.DefaultTimeout, h.MaxTimeout = true, durationpb.New(defaultTimeout), durationpb.New(maxTimeout)
	}
}

// runWithTimeout starts a command of response id with timeout and returns its outcome channel.
func runWithTimeout(ctx context.Context, env *testenv.Env, id, command string, timeout time.Duration) <-chan bashOutcome {
	ch := make(chan bashOutcome, 1)
	go func() {
		stream, err := env.Runtime.RunBash(ctx, &responsev1.RunBashRequest{ResponseId: id, BashCallId: "call", Command: command, Timeout: durationpb.New(timeout)})
		if err != nil {
			ch <- bashOutcome{nil, err}
			return
		}
		run := &bashRun{}
		for {
			msg, err := stream.Recv()
			if err != nil {
				ch <- bashOutcome{run, nil}
				return
			}
			if r := msg.GetResult(); r != nil {
				run.result = r
			}
		}
	}()
	return ch
}

func TestWorkerLiveness(t *testing.T) {
	t.Run("SilentWorkerPastACommandsDeadlineEndsItAsTimedOut", func(t *testing.T) {
		env := testenv.Start(t, quickLiveness())
		f := startFake(t, env, "key-a", "frozen", pinging(time.Minute, time.Hour))
		id := env.Open(t, onKey("key-a"))
		ctx := deadline(t)
		done := runWithTimeout(ctx, env, id, "sleep 100", 300*time.Millisecond)
		start := f.nextStart() // and then say nothing, as a stopped process would
		sent := time.Now()
		out := await(t, ctx, done, "RunBash")
		if r := out.run.result; !r.GetTimedOut() || r.GetExitCode() != 137 || r.GetError() != "" {
			t.Fatalf("result %v, want timed out with exit 137", r)
		}
		if took := time.Since(sent); took < 300*time.Millisecond {
			t.Fatalf("ended after %s, before its 300ms deadline", took)
		}
		// The primary pinged at the deadline and then told the worker to stop the command.
		var pinged bool
		for {
			msg := f.next()
			if msg.GetPing() != nil {
				pinged = true
				continue
			}
			if c := msg.GetCancel(); c != nil {
				if c.GetCommandId() != start.GetCommandId() || !pinged {
					t.Fatalf("cancel %v (pinged %v), want the command's, after a ping", c, pinged)
				}
				break
			}
		}
	})

	t.Run("AnsweringWorkerPastTheDeadlineReportsTheCommandsRealEnd", func(t *testing.T) {
		env := testenv.Start(t, quickLiveness())
		f := startFake(t, env, "key-a", "busy", pinging(time.Minute, time.Hour))
		id := env.Open(t, onKey("key-a"))
		ctx := deadline(t)
		done := runWithTimeout(ctx, env, id, "trap '' TERM; sleep 100", 100*time.Millisecond)
		start := f.nextStart()
		// Answer pings well past the deadline and the slack, as a worker still killing the
		// command would, then report its end.
		until := time.Now().Add(time.Second)
		for time.Now().Before(until) {
			if p := f.next().GetPing(); p != nil {
				f.send(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Pong{Pong: &workerv1.Pong{Nonce: p.GetNonce()}}})
			}
		}
		f.exit(&workerv1.CommandExited{CommandId: start.GetCommandId(), ExitCode: 143, TimedOut: true})
		out := await(t, ctx, done, "RunBash")
		if r := out.run.result; !r.GetTimedOut() || r.GetExitCode() != 143 {
			t.Fatalf("result %v, want the worker's own report (143, timed out)", r)
		}
	})

	t.Run("DefaultAndMaximumTimeoutsOfTheWorkerSetTheDeadline", func(t *testing.T) {
		for _, tc := range []struct {
			name                      string
			asked, dflt, max, atLeast time.Duration
		}{
			{"NoTimeoutAskedUsesTheWorkersDefault", 0, 200 * time.Millisecond, time.Hour, 200 * time.Millisecond},
			{"ALongerTimeoutIsCutToTheWorkersMaximum", time.Hour, time.Minute, 200 * time.Millisecond, 200 * time.Millisecond},
		} {
			t.Run(tc.name, func(t *testing.T) {
				env := testenv.Start(t, quickLiveness())
				f := startFake(t, env, "key-a", "w", pinging(tc.dflt, tc.max))
				id := env.Open(t, onKey("key-a"))
				ctx := deadline(t)
				done := runWithTimeout(ctx, env, id, "sleep 100", tc.asked)
				f.nextStart()
				sent := time.Now()
				out := await(t, ctx, done, "RunBash")
				if !out.run.result.GetTimedOut() || time.Since(sent) < tc.atLeast {
					t.Fatalf("result %v after %s, want timed out after %s", out.run.result, time.Since(sent), tc.atLeast)
				}
			})
		}
	})

	t.Run("SilentWorkerIsDisconnectedAndItsCommandsFailAtOnce", func(t *testing.T) {
		env := testenv.Start(t, quickLiveness())
		f := startFake(t, env, "key-a", "gone-quiet", pinging(time.Hour, time.Hour))
		id := env.Open(t, onKey("key-a"))
		ctx := deadline(t)
		done := runWithTimeout(ctx, env, id, "sleep 100", time.Hour)
		f.nextStart()
		if st := f.ended(); st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "answered nothing") {
			t.Fatalf("stream ended with %v, want UNAVAILABLE for silence", st)
		}
		out := await(t, ctx, done, "RunBash")
		if r := out.run.result; !strings.Contains(r.GetError(), "worker gone-quiet stopped answering") {
			t.Fatalf("result %v, want an error saying the worker stopped answering", r)
		}
	})

	t.Run("WorkerThatDoesNotAnswerPingsIsNeitherPingedNorDisconnected", func(t *testing.T) {
		env := testenv.Start(t, quickLiveness())
		f := startFake(t, env, "key-a", "older") // its Hello does not set answers_ping
		id := env.Open(t, onKey("key-a"))
		ctx := deadline(t)
		done := runWithTimeout(ctx, env, id, "true", 100*time.Millisecond)
		start := f.nextStart()
		// Three liveness timeouts in silence: a worker that never said it answers pings is
		// judged only by its connection.
		time.Sleep(3 * time.Second)
		f.exit(&workerv1.CommandExited{CommandId: start.GetCommandId(), ExitCode: 0})
		out := await(t, ctx, done, "RunBash")
		if r := out.run.result; r.GetTimedOut() || r.GetError() != "" || r.GetExitCode() != 0 {
			t.Fatalf("result %v, want the worker's own report", r)
		}
	})
}
