package worker_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/worker"
)

func TestWorkerHelloCarriesTheWorkersIdentityCapacityAndProxyOrigin(t *testing.T) {
	fp := startFakePrimary(t)
	w := runWorker(t, fp)
	s, hello := fp.accept(t)
	if hello.GetWorkerId() != "worker-under-test" || hello.GetWorkerKey() != "key-a" || hello.GetCapacity() != 4 ||
		hello.GetAgentCliUrl() != w.ProxyURL() {
		t.Errorf("Hello = %v (proxy %s)", hello, w.ProxyURL())
	}
	if !strings.HasPrefix(w.ProxyURL(), "http://127.0.0.1:") {
		t.Errorf("proxy origin %q is not on loopback", w.ProxyURL())
	}
	if got := s.md.Get("turncli-worker-credential"); len(got) != 1 || got[0] != testenv.WorkerCredential("key-a") {
		t.Errorf("credential metadata = %q", got)
	}
	if got := s.md.Get("turncli-worker-id"); len(got) != 1 || got[0] != "worker-under-test" {
		t.Errorf("id metadata = %q", got)
	}
}

func TestWorkerCommands(t *testing.T) {
	credential := testenv.WorkerCredential("key-a")
	// The worker's own process environment holds its credential, as mindroom-worker's may.
	t.Setenv("MINDROOM_WORKER_CREDENTIAL", credential)
	t.Setenv("TURNCLI_WORKER_SECRET_PROBE", credential)
	fp := startFakePrimary(t)
	w := runWorker(t, fp)
	s := fp.welcome(t)

	lines := make([]string, 300)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i)
	}
	cases := []struct {
		name  string
		start *workerv1.StartCommand
		check func(t *testing.T, f finished)
	}{
		{
			name:  "OutputArrivesInOrderAndExitCodeIsData",
			start: &workerv1.StartCommand{Agent: "tester", Command: `for i in $(seq 0 299); do echo "line $i"; done; echo oops >&2; exit 3`},
			check: func(t *testing.T, f finished) {
				if f.stdout != strings.Join(lines, "\n")+"\n" || f.stderr != "oops\n" {
					t.Errorf("stdout %q… stderr %q", f.stdout[:min(len(f.stdout), 40)], f.stderr)
				}
				if ex := f.exited; ex.GetExitCode() != 3 || ex.GetError() != "" || ex.GetCancelled() || ex.GetTimedOut() {
					t.Errorf("exit = %v, want exit code 3 as data", ex)
				}
			},
		},
		{
			name:  "CommandStartsInItsAgentsWorkspace",
			start: &workerv1.StartCommand{Agent: "alice", Command: `pwd`},
			check: func(t *testing.T, f finished) {
				if want := filepath.Join(w.stateDir, "workspaces", "alice") + "\n"; f.stdout != want {
					t.Errorf("pwd = %q, want %q", f.stdout, want)
				}
			},
		},
		{
			name: "OnlyTheTokenAndWindowOfThePrimaryReachTheCommandAndNeverTheCredential",
			start: &workerv1.StartCommand{Agent: "tester", Command: `env`, AgentCliEnv: map[string]string{
				"MINDROOM_AGENT_CLI_TOKEN":   "grant-value",
				"MINDROOM_AGENT_CLI_WINDOW":  "window-value",
				"MINDROOM_AGENT_CLI_URL":     "http://evil.example:1",
				"MINDROOM_WORKER_CREDENTIAL": credential,
				"PATH":                       "/evil",
				"LD_PRELOAD":                 "/evil.so",
			}},
			check: func(t *testing.T, f finished) {
				if strings.Contains(f.stdout, credential) || strings.Contains(f.stdout, "MINDROOM_WORKER") {
					t.Fatalf("the worker's credential reached the command:\n%s", f.stdout)
				}
				vars := map[string]string{}
				for _, line := range strings.Split(strings.TrimSpace(f.stdout), "\n") {
					k, v, _ := strings.Cut(line, "=")
					vars[k] = v
				}
				want := map[string]string{
					"MINDROOM_AGENT_CLI_TOKEN":  "grant-value",
					"MINDROOM_AGENT_CLI_WINDOW": "window-value",
					"MINDROOM_AGENT_CLI_URL":    w.ProxyURL(),
				}
				for k, v := range want {
					if vars[k] != v {
						t.Errorf("%s = %q, want %q", k, vars[k], v)
					}
				}
				if first := strings.Split(vars["PATH"], ":")[0]; first != filepath.Join(w.stateDir, "agent_cli_bin") {
					t.Errorf("PATH = %q, want agent_cli_bin/ first", vars["PATH"])
				}
				allowed := map[string]bool{"HOME": true, "LANG": true, "PATH": true, "PWD": true, "SHLVL": true, "_": true,
					"MINDROOM_AGENT_CLI_URL": true, "MINDROOM_AGENT_CLI_TOKEN": true, "MINDROOM_AGENT_CLI_WINDOW": true}
				for k := range vars {
					if !allowed[k] {
						t.Errorf("unexpected variable %s in a worker shell", k)
					}
				}
			},
		},
		{
			name:  "TimeoutEndsTheCommandAndIsReported",
			start: &workerv1.StartCommand{Agent: "tester", Command: `sleep 1000`, Timeout: durationpb.New(50 * time.Millisecond)},
			check: func(t *testing.T, f finished) {
				if ex := f.exited; !ex.GetTimedOut() || ex.GetExitCode() != 143 || ex.GetError() != "" {
					t.Errorf("exit = %v, want timed out with 143", ex)
				}
			},
		},
		{
			name:  "CommandThatCannotStartReportsWhy",
			start: &workerv1.StartCommand{Agent: "bad\x00agent", Command: `true`},
			check: func(t *testing.T, f finished) {
				if ex := f.exited; !strings.Contains(ex.GetError(), "workspace") {
					t.Errorf("exit = %v, want an error about the workspace", ex)
				}
			},
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.t = t
			tc.start.CommandId = fmt.Sprint("cmd-", i)
			s.start(tc.start)
			tc.check(t, s.collect(tc.start.CommandId))
		})
	}
}

func TestWorkerOutputCredit(t *testing.T) {
	fp := startFakePrimary(t)
	runWorker(t, fp)
	s := fp.welcome(t)

	t.Run("SendsNoMoreChunksThanItsCreditAndResumesOnCredit", func(t *testing.T) {
		s.t = t
		const total = 400_000
		s.start(&workerv1.StartCommand{CommandId: "credit", Agent: "tester", Command: fmt.Sprintf(`head -c %d /dev/zero`, total), OutputCredit: 2})
		allowed, received, bytes := 2, 0, 0
		for {
			msg := s.recv()
			if ex := msg.GetExited(); ex != nil {
				if ex.GetExitCode() != 0 {
					t.Fatalf("exit = %v", ex)
				}
				break
			}
			received++
			bytes += len(msg.GetOutput().GetData())
			if received > allowed {
				t.Fatalf("chunk %d arrived with only %d chunks of credit", received, allowed)
			}
			if received == allowed { // out of credit: only now does more arrive
				s.credit("credit", 2)
				allowed += 2
			}
		}
		if bytes != total {
			t.Errorf("received %d bytes, want %d", bytes, total)
		}
	})

	t.Run("CancelWhileOutOfCreditEndsTheCommandWithNoFurtherOutput", func(t *testing.T) {
		s.t = t
		s.start(&workerv1.StartCommand{CommandId: "starved", Agent: "tester", Command: `head -c 10000000 /dev/zero`, OutputCredit: 2})
		for range 2 {
			if s.recv().GetOutput() == nil {
				t.Fatal("want two chunks first")
			}
		}
		s.cancel("starved")
		msg := s.recv()
		if ex := msg.GetExited(); ex == nil || !ex.GetCancelled() || ex.GetCommandId() != "starved" {
			t.Fatalf("after the cancel got %v, want the cancelled exit and no more output", msg)
		}
	})
}

func TestWorkerCancel(t *testing.T) {
	fp := startFakePrimary(t)
	runWorker(t, fp)
	s := fp.welcome(t)
	cases := []struct {
		name     string
		prefix   string
		wantExit int32
	}{
		{"CancelTerminatesTheWholeProcessGroup", "", 143},
		{"CancelKillsACommandThatIgnoresTerm", "trap '' TERM; ", 137},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.t = t
			h := newHolder(t)
			s.start(&workerv1.StartCommand{CommandId: tc.name, Agent: "tester", Command: tc.prefix + `sleep 1000 >` + h.path + ` & echo ready; wait`})
			s.waitFor(tc.name, "ready")
			await(t, deadline(t), h.opened, "the background child to start")
			s.cancel(tc.name)
			f := s.collect(tc.name)
			if !f.exited.GetCancelled() || f.exited.GetExitCode() != tc.wantExit {
				t.Errorf("exit = %v, want cancelled with %d", f.exited, tc.wantExit)
			}
			await(t, deadline(t), h.gone, "the background child to die with its group")
		})
	}

	t.Run("CancelAndCreditOfUnknownCommandsAreIgnored", func(t *testing.T) {
		s.t = t
		s.cancel("never-started")
		s.credit("never-started", 5)
		s.start(&workerv1.StartCommand{CommandId: "after-unknown", Agent: "tester", Command: `echo fine`})
		if f := s.collect("after-unknown"); f.stdout != "fine\n" || f.exited.GetExitCode() != 0 {
			t.Errorf("command after unknown ids = %+v", f)
		}
	})
}

func TestWorkerCapacity(t *testing.T) {
	fp := startFakePrimary(t)
	runWorker(t, fp, func(c *worker.Config) { c.Capacity = 1 })
	s := fp.welcome(t)
	s.start(&workerv1.StartCommand{CommandId: "first", Agent: "tester", Command: `echo ready; sleep 1000`})
	s.waitFor("first", "ready")

	t.Run("CommandBeyondCapacityIsRefusedWithAnError", func(t *testing.T) {
		s.t = t
		s.start(&workerv1.StartCommand{CommandId: "second", Agent: "tester", Command: `echo never`})
		f := s.collect("second")
		if !strings.Contains(f.exited.GetError(), "at capacity") || f.stdout != "" {
			t.Errorf("second = %+v, want refused at capacity", f)
		}
	})

	t.Run("RepeatedStartOfARunningCommandIsIgnored", func(t *testing.T) {
		s.t = t
		s.start(&workerv1.StartCommand{CommandId: "first", Agent: "tester", Command: `echo duplicate`})
		s.cancel("first")
		if f := s.collect("first"); !f.exited.GetCancelled() {
			t.Errorf("first = %+v, want cancelled", f)
		}
		// Capacity is free again, and nothing of the duplicate arrives before the next command.
		s.start(&workerv1.StartCommand{CommandId: "third", Agent: "tester", Command: `echo third`})
		if f := s.collect("third"); f.stdout != "third\n" {
			t.Errorf("third = %+v", f)
		}
	})
}

func TestWorkerConnection(t *testing.T) {
	t.Run("EndedStreamStopsItsCommandsAndTheWorkerReconnects", func(t *testing.T) {
		fp := startFakePrimary(t)
		runWorker(t, fp)
		s := fp.welcome(t)
		h := newHolder(t)
		s.start(&workerv1.StartCommand{CommandId: "orphan", Agent: "tester", Command: `sleep 1000 >` + h.path + ` & echo ready; wait`})
		s.waitFor("orphan", "ready")
		await(t, deadline(t), h.opened, "the background child to start")
		s.end <- status.Error(codes.Unavailable, "primary restarting")
		await(t, deadline(t), h.gone, "the old stream's command to be stopped")
		again, hello := fp.accept(t)
		if hello.GetWorkerId() != "worker-under-test" {
			t.Errorf("second Hello = %v", hello)
		}
		again.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Welcome{Welcome: &workerv1.Welcome{SessionId: "2"}}})
		again.start(&workerv1.StartCommand{CommandId: "1", Agent: "tester", Command: `echo back`})
		if f := again.collect("1"); f.stdout != "back\n" {
			t.Errorf("command after reconnecting = %+v", f)
		}
	})

	t.Run("FirstAnswerOtherThanWelcomeMakesTheWorkerReconnect", func(t *testing.T) {
		fp := startFakePrimary(t)
		runWorker(t, fp)
		for range 3 {
			s, _ := fp.accept(t)
			s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Credit{Credit: &workerv1.Credit{CommandId: "x", Chunks: 1}}})
		}
		s := fp.welcome(t)
		s.start(&workerv1.StartCommand{CommandId: "1", Agent: "tester", Command: `echo welcome`})
		if f := s.collect("1"); f.stdout != "welcome\n" {
			t.Errorf("command after the refusals = %+v", f)
		}
	})

	// A worker the primary refuses stops with a *RefusedError instead of retrying forever:
	// no reconnect can cure a wrong credential, another key's credential or a bad Hello.
	// Before a welcome or after one, the same.
	for _, code := range []codes.Code{codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument} {
		for _, welcomed := range []bool{false, true} {
			t.Run(fmt.Sprintf("RefusedWith%sStops/welcomed=%v", code, welcomed), func(t *testing.T) {
				fp := startFakePrimary(t)
				w := runWorker(t, fp)
				var s *session
				if welcomed {
					s = fp.welcome(t)
				} else {
					s, _ = fp.accept(t)
				}
				s.end <- status.Error(code, "refused by the test")
				var err error
				select {
				case err = <-w.exited:
				case <-deadline(t).Done():
					t.Fatal("the refused worker is still running")
				}
				var refused *worker.RefusedError
				if !errors.As(err, &refused) || refused.Code != code || refused.Message != "refused by the test" {
					t.Fatalf("Run = %v, want a *RefusedError with %s and the primary's message", err, code)
				}
			})
		}
	}

	t.Run("UnavailableIsRetried", func(t *testing.T) {
		fp := startFakePrimary(t)
		runWorker(t, fp)
		for range 3 {
			s, _ := fp.accept(t)
			s.end <- status.Error(codes.Unavailable, "primary restarting")
		}
		s := fp.welcome(t)
		s.start(&workerv1.StartCommand{CommandId: "1", Agent: "tester", Command: `echo back`})
		if f := s.collect("1"); f.stdout != "back\n" {
			t.Errorf("command after the retries = %+v", f)
		}
	})

	t.Run("StoppingTheWorkerStopsItsCommands", func(t *testing.T) {
		fp := startFakePrimary(t)
		w := runWorker(t, fp)
		s := fp.welcome(t)
		h := newHolder(t)
		s.start(&workerv1.StartCommand{CommandId: "1", Agent: "tester", Command: `sleep 1000 >` + h.path + ` & echo ready; wait`})
		s.waitFor("1", "ready")
		await(t, deadline(t), h.opened, "the background child to start")
		w.stop()
		await(t, deadline(t), h.gone, "the stopped worker's command to die")
	})
}
