package shelltk

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/turncli/turncli/primary/catalog"
)

func TestRunShellCommand(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    map[string]any
		wantErr string
	}{
		{
			name: "CommandFinishingWithinWaitReturnsExitedResult",
			args: `{"command":"echo out; echo err >&2; exit 3"}`,
			want: map[string]any{"status": "exited", "exit_code": 3, "timed_out": false, "stdout": "out\n", "stderr": "err\n"},
		},
		{
			name: "SilentCommandHasEmptyOutput",
			args: `{"command":"true","wait_seconds":600,"timeout_seconds":3600}`,
			want: map[string]any{"status": "exited", "exit_code": 0, "timed_out": false, "stdout": "", "stderr": ""},
		},
		{
			name: "TimeoutStopsTheCommandAndSaysSo",
			args: `{"command":"echo started; sleep 60","timeout_seconds":1}`,
			want: map[string]any{"status": "exited", "exit_code": 143, "timed_out": true, "stdout": "started\n", "stderr": ""},
		},
		{
			name:    "MissingCommandFails",
			args:    `{}`,
			wantErr: `argument "command" must be a non-empty string`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			got, err := e.call(t, t.Context(), newResponse(t, "r1"), "run_shell_command", tc.args)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("result = %v, want %v", got, tc.want)
			}
			for k, w := range tc.want {
				if got[k] != w {
					t.Fatalf("%s = %#v, want %#v (result %v)", k, got[k], w, got)
				}
			}
		})
	}
}

func TestBackgroundCommand(t *testing.T) {
	t.Run("StillRunningAfterWaitGivesHandleThenCheckFollowsItToExit", func(t *testing.T) {
		e := newEnv(t, Options{})
		resp := newResponse(t, "r1")
		fifo := e.fifo(t, "go")
		handle := e.background(t, resp, `echo before; read -r line < '`+fifo+`'; echo "got $line"; exit 7`)
		if _, err := uuid.Parse(handle); err != nil {
			t.Fatalf("handle %q is not a UUID", handle)
		}

		v := e.mustCall(t, resp, "check_shell_command", `{"handle":"`+handle+`"}`)
		if v["status"] != "running" || v["handle"] != handle {
			t.Fatalf("check while blocked = %v, want running", v)
		}
		if _, ok := v["exit_code"]; ok {
			t.Fatalf("running result has an exit code: %v", v)
		}

		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.WriteString("go\n")
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		e.waitExited(t, resp, handle)

		v = e.mustCall(t, resp, "check_shell_command", `{"handle":"`+handle+`"}`)
		if v["status"] != "exited" || v["exit_code"] != 7 || v["timed_out"] != false || v["stdout"] != "before\ngot go\n" {
			t.Fatalf("check after exit = %v", v)
		}
		if _, err := e.call(t, t.Context(), resp, "check_shell_command", `{"handle":"`+handle+`"}`); !errors.Is(err, ErrUnknownHandle) {
			t.Fatalf("second check after exit: err = %v, want Unknown shell handle", err)
		}
	})

	t.Run("KillStopsItAndReportsKilled", func(t *testing.T) {
		e := newEnv(t, Options{})
		resp := newResponse(t, "r1")
		handle := e.backgroundRunning(t, resp, "sleep 1000")
		v := e.mustCall(t, resp, "kill_shell_command", `{"handle":"`+handle+`"}`)
		if v["status"] != "killed" || v["handle"] != handle || v["exit_code"] != 143 {
			t.Fatalf("kill = %v, want killed with exit code 143", v)
		}
		if _, err := e.call(t, t.Context(), resp, "check_shell_command", `{"handle":"`+handle+`"}`); !errors.Is(err, ErrUnknownHandle) {
			t.Fatalf("check after kill: err = %v, want Unknown shell handle", err)
		}
	})

	t.Run("KillOfExitedCommandReportsExited", func(t *testing.T) {
		e := newEnv(t, Options{})
		resp := newResponse(t, "r1")
		fifo := e.fifo(t, "go")
		handle := e.background(t, resp, `read -r line < '`+fifo+`'; exit 4`)
		if err := os.WriteFile(fifo, []byte("\n"), 0); err != nil {
			t.Fatal(err)
		}
		e.waitExited(t, resp, handle)
		v := e.mustCall(t, resp, "kill_shell_command", `{"handle":"`+handle+`"}`)
		if v["status"] != "exited" || v["exit_code"] != 4 {
			t.Fatalf("kill after exit = %v, want exited with exit code 4", v)
		}
	})

	t.Run("HandleOfAnotherResponseIsUnknown", func(t *testing.T) {
		e := newEnv(t, Options{})
		owner, other := newResponse(t, "r1"), newResponse(t, "r2")
		handle := e.background(t, owner, "sleep 1000")
		for _, function := range []string{"check_shell_command", "kill_shell_command"} {
			_, err := e.call(t, t.Context(), other, function, `{"handle":"`+handle+`"}`)
			if err == nil || err.Error() != "Unknown shell handle" {
				t.Fatalf("%s from another response: err = %v, want Unknown shell handle", function, err)
			}
		}
		if v := e.mustCall(t, owner, "check_shell_command", `{"handle":"`+handle+`"}`); v["status"] != "running" {
			t.Fatalf("owner's check = %v, want running", v)
		}
	})

	t.Run("UnknownHandleIsUnknown", func(t *testing.T) {
		e := newEnv(t, Options{})
		_, err := e.call(t, t.Context(), newResponse(t, "r1"), "check_shell_command", `{"handle":"no-such-handle"}`)
		if !errors.Is(err, ErrUnknownHandle) {
			t.Fatalf("err = %v, want Unknown shell handle", err)
		}
	})

	t.Run("EndOfLifetimeKillsBackgroundCommandsAndForgetsThem", func(t *testing.T) {
		e := newEnv(t, Options{})
		resp := newResponse(t, "r1")
		var handles []string
		var cmds []*command
		for range 3 {
			h := e.backgroundRunning(t, resp, "sleep 1000")
			c, err := e.tk.lookup(resp.id, h)
			if err != nil {
				t.Fatal(err)
			}
			handles, cmds = append(handles, h), append(cmds, c)
		}
		resp.end()
		for i, c := range cmds {
			<-c.done
			if !c.result.Cancelled {
				t.Fatalf("command %d exited without being cancelled: %+v", i, c.result)
			}
			if _, err := e.call(t, t.Context(), resp, "check_shell_command", `{"handle":"`+handles[i]+`"}`); !errors.Is(err, ErrUnknownHandle) {
				t.Fatalf("check after the response ended: err = %v, want Unknown shell handle", err)
			}
		}
	})

	t.Run("LimitRefusesBackgroundCommandsPastIt", func(t *testing.T) {
		e := newEnv(t, Options{MaxBackground: 2})
		resp := newResponse(t, "r1")
		first := e.background(t, resp, "sleep 1000")
		e.background(t, resp, "sleep 1000")
		_, err := e.call(t, t.Context(), resp, "run_shell_command", `{"command":"sleep 1000","wait_seconds":0}`)
		if err == nil || !strings.Contains(err.Error(), "At most 2 shell commands") {
			t.Fatalf("third background command: err = %v, want the limit", err)
		}
		if v := e.mustCall(t, newResponse(t, "r2"), "run_shell_command", `{"command":"true"}`); v["status"] != "exited" {
			t.Fatalf("another response's command = %v, want exited", v)
		}
		e.mustCall(t, resp, "kill_shell_command", `{"handle":"`+first+`"}`)
		e.background(t, resp, "sleep 1000")
	})

	t.Run("InjectedHandlesAreUsed", func(t *testing.T) {
		e := newEnv(t, Options{NewHandle: func() string { return "h-1" }})
		if h := e.background(t, newResponse(t, "r1"), "sleep 1000"); h != "h-1" {
			t.Fatalf("handle = %q, want h-1", h)
		}
	})
}

func TestCancelledCallKillsItsCommand(t *testing.T) {
	e := newEnv(t, Options{})
	resp := newResponse(t, "r1")
	up := e.fifo(t, "up")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := e.call(t, ctx, resp, "run_shell_command", `{"command":"echo up > '`+up+`'; sleep 1000","wait_seconds":600}`)
		done <- err
	}()
	run := <-e.shell.started
	if _, err := os.ReadFile(up); err != nil { // returns once the command is running
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	select {
	case <-run.returned:
	default:
		t.Fatal("the call returned while its command was still running")
	}
	if !run.result.Cancelled {
		t.Fatalf("command result = %+v, want cancelled", run.result)
	}
}

func TestCommandThatCannotStartFailsTheCall(t *testing.T) {
	res, err := New(Options{}).Call(t.Context(), catalog.Call{
		Toolkit:   Name,
		Function:  "run_shell_command",
		Arguments: map[string]any{"command": "true"},
		Identity:  catalog.Identity{ResponseID: "r1"},
		Shell:     failingShell{},
		Lifetime:  t.Context(),
	})
	if err == nil || err.Error() != "Shell command did not start: window has ended" {
		t.Fatalf("result %v, err = %v, want did not start", res, err)
	}
}
