package workerhub_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/response"
)

const (
	stdout = workerv1.OutputStream_OUTPUT_STREAM_STDOUT
	stderr = workerv1.OutputStream_OUTPUT_STREAM_STDERR
)

func onKey(key string) func(*responsev1.OpenResponseRequest) {
	return func(r *responsev1.OpenResponseRequest) { r.WorkerKey = key }
}

// onAbsentKey opens on a key no worker serves: in the standard mode, since a minimal response
// opens only once a worker of its key is connected.
func onAbsentKey(key string) func(*responsev1.OpenResponseRequest) {
	return func(r *responsev1.OpenResponseRequest) {
		r.WorkerKey, r.ShellMode = key, responsev1.ShellMode_SHELL_MODE_STANDARD
	}
}

// sendWithinCredit sends chunks as a well-behaved worker: never more than its credit ahead,
// reading Credit from the primary whenever it runs out.
func (f *fakeWorker) sendWithinCredit(start *workerv1.StartCommand, chunks []string) {
	f.t.Helper()
	allowed := int(start.GetOutputCredit())
	for i, c := range chunks {
		for i >= allowed {
			msg, err := f.stream.Recv()
			if err != nil {
				f.t.Fatalf("waiting for credit after %d chunks: %v", i, err)
			}
			if cr := msg.GetCredit(); cr.GetCommandId() == start.GetCommandId() {
				allowed += int(cr.GetChunks())
			}
		}
		f.output(start.GetCommandId(), stdout, c)
	}
}

func TestHubCommandRoundTrip(t *testing.T) {
	many := make([]string, 200) // several times any output credit
	for i := range many {
		many[i] = strconv.Itoa(i) + "\n"
	}
	cases := []struct {
		name       string
		chunks     []string
		stderr     string
		exited     *workerv1.CommandExited
		wantResult *responsev1.BashResult
	}{
		{
			name:   "OutputArrivesInOrderAndExitCodeIsData",
			chunks: []string{"one\n", "two\n"}, stderr: "warning\n",
			exited:     &workerv1.CommandExited{ExitCode: 7},
			wantResult: &responsev1.BashResult{ExitCode: 7},
		},
		{
			name:       "OutputBeyondTheFirstCreditArrivesInOrderAsCreditReturns",
			chunks:     many,
			exited:     &workerv1.CommandExited{},
			wantResult: &responsev1.BashResult{},
		},
		{
			name:       "TimedOutCommandIsReportedAsData",
			exited:     &workerv1.CommandExited{ExitCode: 143, TimedOut: true},
			wantResult: &responsev1.BashResult{ExitCode: 143, TimedOut: true},
		},
		{
			name:       "CommandThatCouldNotStartIsAnErrorResult",
			exited:     &workerv1.CommandExited{Error: "workspace is unavailable"},
			wantResult: &responsev1.BashResult{ExitCode: -1, Error: "workspace is unavailable"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testenv.Start(t)
			f := startFake(t, env, "key-a", "fake-a1")
			id := env.Open(t, onKey("key-a"))
			ctx := deadline(t)
			done := asyncBash(ctx, env, id, "round-trip", "echo hello", nil)

			start := f.nextStart()
			keys := make([]string, 0, len(start.GetAgentCliEnv()))
			for k, v := range start.GetAgentCliEnv() {
				if v == "" {
					t.Errorf("%s is empty", k)
				}
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if want := []string{"MINDROOM_AGENT_CLI_TOKEN", "MINDROOM_AGENT_CLI_WINDOW"}; !slices.Equal(keys, want) {
				t.Errorf("StartCommand env carries %v, want exactly %v", keys, want)
			}
			if start.GetCommand() != "echo hello" || start.GetAgent() != "tester" || start.GetOutputCredit() == 0 || start.GetCommandId() == "" {
				t.Errorf("StartCommand = %v", start)
			}
			f.sendWithinCredit(start, tc.chunks)
			if tc.stderr != "" {
				f.output(start.GetCommandId(), stderr, tc.stderr)
			}
			tc.exited.CommandId = start.GetCommandId()
			f.exit(tc.exited)

			out := await(t, ctx, done, "RunBash")
			if out.err != nil {
				t.Fatalf("RunBash: %v", out.err)
			}
			if got, want := out.run.stdout.String(), strings.Join(tc.chunks, ""); got != want {
				t.Errorf("stdout = %q, want %q", got, want)
			}
			if got := out.run.stderr.String(); got != tc.stderr {
				t.Errorf("stderr = %q, want %q", got, tc.stderr)
			}
			if r := out.run.result; !proto.Equal(r, tc.wantResult) {
				t.Errorf("result = %v, want %v", r, tc.wantResult)
			}
		})
	}
}

// shellCommand is a command of a response bound to nothing yet, for Hub.Run.
func shellCommand(key, command string) response.ShellCommand {
	return response.ShellCommand{ResponseID: "r", Agent: "tester", WorkerKey: key, Binding: &response.Binding{}, Command: command}
}

type runOutcome struct {
	res bashexec.Result
	err error
}

func TestHubOutputCredit(t *testing.T) {
	// The consumer holds the first chunk, so nothing is delivered and no credit returns: the
	// worker may send exactly its credit.
	cases := []struct {
		name      string
		extra     int
		wantEnded bool
	}{
		{"ChunksWithinCreditAreAllDeliveredInOrder", 0, false},
		{"ChunksBeyondCreditEndTheWorkersConnection", 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testenv.Start(t)
			f := startFake(t, env, "key-a", "fake-credit")
			ctx := deadline(t)
			release := make(chan struct{})
			t.Cleanup(func() {
				select {
				case <-release:
				default:
					close(release)
				}
			})
			var got []string
			out := func(_ bashexec.Stream, b []byte) {
				if len(got) == 0 {
					<-release
				}
				got = append(got, string(b))
			}
			done := make(chan runOutcome, 1)
			go func() {
				res, err := env.Primary.Internals().Workers.Run(ctx, shellCommand("key-a", "yes"), out)
				done <- runOutcome{res, err}
			}()
			start := f.nextStart()
			n := int(start.GetOutputCredit()) + tc.extra
			var want []string
			for i := range n {
				want = append(want, strconv.Itoa(i))
				// Sends fail once the primary ended the stream; Recv below says why.
				_ = f.stream.Send(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Output{Output: &workerv1.CommandOutput{
					CommandId: start.GetCommandId(), Stream: stdout, Data: []byte(want[i])}}})
			}
			if tc.wantEnded {
				if st := f.ended(); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "credit") {
					t.Fatalf("connection ended with %v, want InvalidArgument about credit", st)
				}
				close(release)
				r := await(t, ctx, done, "Run")
				if r.err == nil || !strings.Contains(r.err.Error(), "worker fake-credit disconnected") {
					t.Fatalf("Run = %+v, %v; want the disconnect error", r.res, r.err)
				}
				return
			}
			f.exit(&workerv1.CommandExited{CommandId: start.GetCommandId(), ExitCode: 0})
			close(release)
			r := await(t, ctx, done, "Run")
			if r.err != nil || r.res.ExitCode != 0 {
				t.Fatalf("Run = %+v, %v", r.res, r.err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("delivered %v, want %v", got, want)
			}
		})
	}
}

func TestHubSlowConsumerBlocksTheWorkersCommandInsteadOfBuffering(t *testing.T) {
	env := testenv.Start(t)
	startWorker(t, env, "key-a", "slow-a")
	id := env.Open(t, onKey("key-a"))
	dir := t.TempDir()
	full, errFile := filepath.Join(dir, "full.fifo"), filepath.Join(dir, "dd.err")
	if err := syscall.Mkfifo(full, 0o600); err != nil {
		t.Fatal(err)
	}
	// Phase 1 writes zeros without blocking until its stdout pipe is full: that only happens if
	// nothing downstream reads ahead of the paused consumer. Then it says so through the FIFO.
	// Phase 2 writes 5,000,000 "x" normally.
	const big = 5_000_000
	command := fmt.Sprintf(`while dd if=/dev/zero of=/proc/$$/fd/1 bs=4096 count=1 oflag=nonblock 2>%q; do :; done
echo full >%q
head -c %d /dev/zero | tr '\0' x`, errFile, full, big)

	ctx := deadline(t)
	stream, err := env.Runtime.RunBash(ctx, &responsev1.RunBashRequest{ResponseId: id, BashCallId: "slow", Command: command})
	if err != nil {
		t.Fatal(err)
	}
	// The consumer reads nothing until the command reports its pipe full.
	signal := make(chan error, 1)
	go func() {
		// Read to the end: closing early would make the command's echo die of SIGPIPE.
		b, err := os.ReadFile(full)
		if err == nil && string(b) != "full\n" {
			err = fmt.Errorf("signal %q", b)
		}
		signal <- err
	}()
	t.Cleanup(func() {
		if f, err := os.OpenFile(full, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	if err := await(t, ctx, signal, "the command's pipe to fill"); err != nil {
		t.Fatal(err)
	}
	if msg, _ := os.ReadFile(errFile); !strings.Contains(string(msg), "Resource temporarily unavailable") {
		t.Fatalf("phase 1 ended with %q, want a write that would block", msg)
	}

	var zeros, xs int
	var result *responsev1.BashResult
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if r := msg.GetResult(); r != nil {
			result = r
		}
		for _, b := range msg.GetOutput().GetData() {
			switch {
			case b == 0 && xs == 0:
				zeros++
			case b == 'x':
				xs++
			default:
				t.Fatalf("unexpected byte %q after %d zeros and %d x", b, zeros, xs)
			}
		}
	}
	if result.GetExitCode() != 0 || result.GetError() != "" {
		t.Fatalf("result = %v", result)
	}
	if xs != big || zeros == 0 {
		t.Errorf("received %d zeros then %d x, want some zeros then exactly %d x", zeros, xs, big)
	}
}

func TestHubCancel(t *testing.T) {
	t.Run("CancelledRunSendsCancelCommandAndReportsTheWorkersExit", func(t *testing.T) {
		env := testenv.Start(t)
		f := startFake(t, env, "key-a", "fake-cancel")
		ctx, cancel := context.WithCancel(deadline(t))
		done := make(chan runOutcome, 1)
		go func() {
			res, err := env.Primary.Internals().Workers.Run(ctx, shellCommand("key-a", "sleep 1000"), func(bashexec.Stream, []byte) {})
			done <- runOutcome{res, err}
		}()
		start := f.nextStart()
		cancel()
		msg := f.next()
		if msg.GetCancel().GetCommandId() != start.GetCommandId() {
			t.Fatalf("after cancel the worker got %v, want CancelCommand for %s", msg, start.GetCommandId())
		}
		f.exit(&workerv1.CommandExited{CommandId: start.GetCommandId(), ExitCode: 143, Cancelled: true})
		r := await(t, deadline(t), done, "Run")
		if r.err != nil || !r.res.Cancelled || r.res.ExitCode != 143 {
			t.Fatalf("Run = %+v, %v; want the cancelled exit", r.res, r.err)
		}
	})

	cases := []struct {
		name     string
		prefix   string
		wantExit int
	}{
		{"CancelledCommandsProcessGroupIsTerminated", "", 143},
		{"CancelledCommandIgnoringTermIsKilled", "trap '' TERM; ", 137},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testenv.Start(t)
			startWorker(t, env, "key-a", "real-cancel")
			h := newHolder(t)
			ctx, cancel := context.WithCancel(deadline(t))
			ready := make(chan struct{})
			done := make(chan runOutcome, 1)
			go func() {
				res, err := env.Primary.Internals().Workers.Run(ctx, shellCommand("key-a", tc.prefix+`sleep 1000 >`+h.path+` & echo ready; wait`),
					func(_ bashexec.Stream, b []byte) {
						if strings.Contains(string(b), "ready") {
							close(ready)
						}
					})
				done <- runOutcome{res, err}
			}()
			await(t, ctx, ready, "the command to start")
			await(t, ctx, h.opened, "the background child to start")
			cancel()
			r := await(t, deadline(t), done, "Run")
			if r.err != nil || !r.res.Cancelled || r.res.ExitCode != tc.wantExit {
				t.Fatalf("Run = %+v, %v; want cancelled with exit %d", r.res, r.err, tc.wantExit)
			}
			await(t, deadline(t), h.gone, "the background child to die with its group")
		})
	}

	t.Run("CancelledRunBashStopsTheCommandAndTheResponseStaysUsable", func(t *testing.T) {
		env := testenv.Start(t)
		startWorker(t, env, "key-a", "rpc-cancel")
		id := env.Open(t, onKey("key-a"))
		h := newHolder(t)
		ctx, cancel := context.WithCancel(deadline(t))
		ready := make(chan struct{})
		var once bool
		done := asyncBash(ctx, env, id, "cancelled", `sleep 1000 >`+h.path+` & echo ready; wait`, func(c *responsev1.OutputChunk) {
			if !once && strings.Contains(string(c.GetData()), "ready") {
				once = true
				close(ready)
			}
		})
		await(t, ctx, ready, "the command to start")
		await(t, ctx, h.opened, "the background child to start")
		cancel()
		if out := await(t, deadline(t), done, "RunBash"); status.Code(out.err) != codes.Canceled {
			t.Fatalf("RunBash = %v, want Canceled", out.err)
		}
		await(t, deadline(t), h.gone, "the background child to die with its group")
		after, err := runBash(deadline(t), env, id, "after", `mindroom-agent tools call test.echo '{"still":"usable"}'`, nil)
		if err != nil || after.result.GetExitCode() != 0 || len(after.result.GetReceipts()) != 1 {
			t.Fatalf("next RunBash = %+v, %v", after, err)
		}
	})
}

func TestHubDisconnect(t *testing.T) {
	t.Run("WorkerThatStopsMidCommandFailsItsRunBashAndTheWindowStillDrains", func(t *testing.T) {
		env := testenv.Start(t)
		w := startWorker(t, env, "key-a", "leaving")
		id := env.Open(t, onKey("key-a"))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ready := make(chan struct{})
		var once bool
		done := asyncBash(ctx, env, id, "doomed",
			`mindroom-agent tools call test.gate '{"name":"doomed"}' --timeout 0 >/dev/null; echo ready; sleep 1000`,
			func(c *responsev1.OutputChunk) {
				if !once && strings.Contains(string(c.GetData()), "ready") {
					once = true
					close(ready)
				}
			})
		await(t, ctx, ready, "the command to submit its call")
		w.Stop()
		select {
		case out := <-done:
			t.Fatalf("RunBash returned while its window still had admitted work: %+v, %v", out.run, out.err)
		default:
		}
		env.Primary.Internals().TestToolkit.Release("doomed")
		out := await(t, ctx, done, "RunBash")
		if out.err != nil {
			t.Fatalf("RunBash: %v", out.err)
		}
		r := out.run.result
		if !strings.Contains(r.GetError(), "worker leaving disconnected") || r.GetExitCode() != -1 {
			t.Errorf("result = %v, want an error naming the worker", r)
		}
		if rs := r.GetReceipts(); len(rs) != 1 || rs[0].GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED ||
			rs[0].GetOutcomeJson() != `{"released":"doomed"}` || rs[0].GetParentBashCallId() != "doomed" {
			t.Errorf("receipts = %v, want the gate call settled in the drained window", rs)
		}
	})

	cases := []struct {
		name   string
		end    func(*fakeWorker)
		output bool
	}{
		// Half-closing delivers everything sent before it, so that output must not be lost.
		{"WorkerWhoseConnectionEndsMidCommandFailsItsRunBashAfterItsOutput", func(f *fakeWorker) { _ = f.stream.CloseSend() }, true},
		{"WorkerThatCrashesMidCommandFailsItsRunBash", (*fakeWorker).hangUp, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testenv.Start(t)
			f := startFake(t, env, "key-a", "crashing")
			id := env.Open(t, onKey("key-a"))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done := asyncBash(ctx, env, id, "crash", "sleep 1000", nil)
			start := f.nextStart()
			for i := range 5 {
				f.output(start.GetCommandId(), stdout, strconv.Itoa(i))
			}
			tc.end(f)
			out := await(t, ctx, done, "RunBash")
			if out.err != nil {
				t.Fatalf("RunBash: %v", out.err)
			}
			if r := out.run.result; !strings.Contains(r.GetError(), "worker crashing disconnected") || r.GetExitCode() != -1 {
				t.Errorf("result = %v, want an error naming the worker", r)
			}
			if got := out.run.stdout.String(); tc.output && got != "01234" {
				t.Errorf("stdout = %q, want the output sent before the connection ended", got)
			}
		})
	}

	t.Run("ResponseMovesToAnotherWorkerOfItsKeyWhenItsWorkerIsGone", func(t *testing.T) {
		env := testenv.Start(t)
		first := startFake(t, env, "key-a", "first")
		id := env.Open(t, onKey("key-a"))
		ctx := deadline(t)
		done := asyncBash(ctx, env, id, "on-first", "true", nil)
		start := first.nextStart()
		first.exit(&workerv1.CommandExited{CommandId: start.GetCommandId()})
		if out := await(t, ctx, done, "RunBash"); out.err != nil || out.run.result.GetError() != "" {
			t.Fatalf("RunBash on first = %+v, %v", out.run, out.err)
		}
		first.hangUp()
		first.ended()
		second := startWorker(t, env, "key-a", "second")
		out, err := runBash(ctx, env, id, "on-second", `echo "$MINDROOM_AGENT_CLI_URL"; mindroom-agent tools call test.echo '{"moved":true}'`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Split(out.stdout.String(), "\n")[0]; got != second.ProxyURL() || out.result.GetExitCode() != 0 {
			t.Fatalf("result %v, stdout %q stderr %q; want the second worker's proxy", out.result, out.stdout.String(), out.stderr.String())
		}
		if rs := out.result.GetReceipts(); len(rs) != 1 || rs[0].GetOutcomeJson() != `{"moved":true}` {
			t.Errorf("receipts = %v", rs)
		}
	})
}

func TestHubNoWorkerToRunOn(t *testing.T) {
	t.Run("NoWorkerWithTheKeyIsAnErrorResultNotAHang", func(t *testing.T) {
		env := testenv.Start(t)
		startFake(t, env, "key-a", "other-key")
		id := env.Open(t, onAbsentKey("key-b"))
		out, err := runBash(deadline(t), env, id, "nowhere", "true", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := out.run(); r.GetError() != `no worker with key "key-b" is connected` || r.GetExitCode() != -1 {
			t.Errorf("result = %v", r)
		}
		_, err = env.Runtime.OpenWindow(deadline(t), &responsev1.OpenWindowRequest{ResponseId: id, BashCallId: "w"})
		if st := status.Convert(err); st.Code() != codes.Unavailable || !strings.Contains(st.Message(), `no worker with key "key-b" is connected`) {
			t.Errorf("OpenWindow = %v, want Unavailable naming the key", err)
		}
	})

	t.Run("EveryWorkerOfTheKeyAtCapacityIsAnErrorResult", func(t *testing.T) {
		env := testenv.Start(t)
		f := startFake(t, env, "key-a", "busy", func(h *workerv1.Hello) { h.Capacity = 1 })
		id := env.Open(t, onKey("key-a"))
		other := env.Open(t, onKey("key-a"))
		ctx := deadline(t)
		done := asyncBash(ctx, env, id, "occupying", "sleep 1000", nil)
		start := f.nextStart()
		out, err := runBash(ctx, env, other, "turned-away", "true", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := out.run(); r.GetError() != `every worker with key "key-a" is at capacity` {
			t.Errorf("result = %v", r)
		}
		f.exit(&workerv1.CommandExited{CommandId: start.GetCommandId()})
		await(t, ctx, done, "RunBash")
	})
}

// Commands placed at the same moment count against each other: a worker of capacity 2 gets
// exactly 2 of 16 at once, and the others are told the key is at capacity by the primary, never
// sent to a worker that would refuse them.
func TestHubConcurrentPlacementNeverOverfillsAWorker(t *testing.T) {
	const capacity, commands = 2, 16
	env := testenv.Start(t)
	f := startFake(t, env, "key-a", "two-slots", func(h *workerv1.Hello) { h.Capacity = capacity })
	ctx := deadline(t)
	ids := make([]string, commands) // opened first: a minimal response opens only while the key has room
	for i := range ids {
		ids[i] = env.Open(t, onKey("key-a"))
	}
	outcomes := make(chan bashOutcome, commands) // every command's, as it ends
	for i, id := range ids {
		go func() { outcomes <- <-asyncBash(ctx, env, id, fmt.Sprint("b", i), "sleep 1000", nil) }()
	}
	for turnedAway := range commands - capacity {
		o := await(t, ctx, outcomes, fmt.Sprintf("the %d-th command turned away", turnedAway+1))
		if o.err != nil || o.run.run().GetError() != `every worker with key "key-a" is at capacity` {
			t.Fatalf("a command ended %v, %v while the worker was full; want the key at capacity", o.run, o.err)
		}
	}
	for range capacity {
		f.exit(&workerv1.CommandExited{CommandId: f.nextStart().GetCommandId()})
	}
	for range capacity {
		if o := await(t, ctx, outcomes, "a placed command"); o.err != nil || o.run.run().GetError() != "" {
			t.Errorf("a placed command: %v, %v", o.run, o.err)
		}
	}
}

func (b *bashRun) run() *responsev1.BashResult { return b.result }
