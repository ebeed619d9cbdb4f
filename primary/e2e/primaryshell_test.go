package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

// waitText waits for a line holding fragment (the n-th such line, 1-based) in the raw output.
func (l *mpLog) waitText(ctx context.Context, fragment string, n int) error {
	for {
		l.mu.Lock()
		seen := 0
		for _, line := range l.raw {
			if strings.Contains(line, fragment) {
				seen++
			}
		}
		changed, ended := l.changed, l.ended
		l.mu.Unlock()
		switch {
		case seen >= n:
			return nil
		case ended:
			return fmt.Errorf("the output ended without %d line(s) holding %q", n, fragment)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %q: %w", fragment, ctx.Err())
		}
	}
}

func (l *mpLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.raw, "\n")
}

// interactiveShell is a running `mindroom-primary shell`: its input is a pipe the test writes,
// its error output (Bash's prompts and the command's messages) is collected line by line.
type interactiveShell struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *mpLog
	stdout *bytes.Buffer
	exited chan struct{}
	read   sync.WaitGroup
}

func startInteractiveShell(t *testing.T, bin, state string, args ...string) *interactiveShell {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "mindroom-primary"), append([]string{"shell", "--state-dir", state}, args...)...)
	cmd.Env = mpBaseEnv(t, "USER=tester")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &interactiveShell{cmd: cmd, stdin: stdin, stderr: &mpLog{changed: make(chan struct{})}, stdout: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr, cmd.Stdout = pw, s.stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	s.read.Go(func() {
		defer pr.Close()
		s.stderr.read(pr)
	})
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			_ = cmd.Process.Kill()
			<-s.exited
		}
		s.read.Wait()
		if t.Failed() {
			t.Logf("shell stderr:\n%s\nstdout:\n%s", s.stderr.text(), s.stdout)
		}
	})
	return s
}

func (s *interactiveShell) write(t *testing.T, input string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, input); err != nil {
		t.Fatalf("shell input: %v", err)
	}
}

func (s *interactiveShell) waitText(t *testing.T, fragment string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mpDeadline)
	defer cancel()
	if err := s.stderr.waitText(ctx, fragment, n); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the command to exit and returns its exit code.
func (s *interactiveShell) wait(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mpDeadline)
	defer cancel()
	select {
	case <-s.exited:
	case <-ctx.Done():
		t.Fatalf("mindroom-primary shell did not exit: %v", ctx.Err())
	}
	s.read.Wait()
	return s.cmd.ProcessState.ExitCode()
}

// TestInteractiveShellSaysWhatItsWindowWaitsForAndCancelsOnRequest runs the real primary and the
// real `mindroom-primary shell` over pipes: after Bash exits with a gate call still running, the
// shell names the call and how to stop waiting; Ctrl-C, "exit" or the end of input cancels the
// call (by closing the response) and the window closes with it cancelled; a released call lets
// the window close on its own with the call completed.
func TestInteractiveShellSaysWhatItsWindowWaitsForAndCancelsOnRequest(t *testing.T) {
	bin := mpBuild(t)
	state := filepath.Join(shellTempDir(t), "state")
	rig, _ := startRestartPrimary(t, "primary", bin, state, freeLoopbackAddr(t), "--enable-test-toolkit")

	const waits = "its window waits for 1 call to finish: test.gate "
	gateThenExit := func(gate string) string {
		return fmt.Sprintf("mindroom-agent tools call test.gate '{\"name\":\"%s\"}' --timeout 0; echo \"gate exit $?\"\nexit\n", gate)
	}

	for _, tc := range []struct {
		name string
		stop func(t *testing.T, s *interactiveShell)
	}{
		{"CtrlCCancelsTheCall", func(t *testing.T, s *interactiveShell) {
			if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}},
		{"ASecondExitCancelsTheCall", func(t *testing.T, s *interactiveShell) { s.write(t, "exit\n") }},
		{"TheEndOfInputCancelsTheCall", func(t *testing.T, s *interactiveShell) { s.stdin.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startInteractiveShell(t, bin, state)
			s.write(t, gateThenExit(tc.name))
			s.waitText(t, waits, 1)
			s.waitText(t, "Press Ctrl-C, or type exit, to cancel it", 1)
			tc.stop(t, s)
			if code := s.wait(t); code != 0 {
				t.Fatalf("exit code %d", code)
			}
			if !strings.Contains(s.stdout.String(), "gate exit 3") {
				t.Errorf("the gate call did not print its running receipt (exit 3)")
			}
			out := s.stderr.text()
			for _, want := range []string{"cancelling the window's calls", "window closed with 1 receipt(s)", "test.gate cancelled"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q", want)
				}
			}
		})
	}

	t.Run("AReleasedCallLetsTheWindowCloseOnItsOwn", func(t *testing.T) {
		s := startInteractiveShell(t, bin, state)
		s.write(t, gateThenExit("released"))
		s.waitText(t, waits, 1)
		s.write(t, "\n") // any other line says again what the window waits for
		s.waitText(t, waits, 2)

		ctx, cancel := bearerCtx(rig.runtime)
		defer cancel()
		opened, err := rig.api.OpenResponse(ctx, &responsev1.OpenResponseRequest{AgentName: "releaser"})
		if err != nil {
			t.Fatal(err)
		}
		release, err := mpRunBash(ctx, rig.api, opened.GetResponseId(), "release",
			`mindroom-agent tools call test.release '{"name":"released"}'`, nil)
		if err != nil || release.result.GetExitCode() != 0 {
			t.Fatalf("test.release: %v %+v", err, release)
		}
		if code := s.wait(t); code != 0 {
			t.Fatalf("exit code %d", code)
		}
		out := s.stderr.text()
		if !strings.Contains(out, "window closed with 1 receipt(s)") || !strings.Contains(out, "test.gate completed") ||
			strings.Contains(out, "cancelling") {
			t.Errorf("the window did not close on its own with the call completed")
		}
	})
}

// TestInteractiveShellOpensTheResponseItsFlagsDescribe: the conversation, requester, origin,
// flags and shell mode given to `mindroom-primary shell` are the response's, so ask_questions
// (a trusted requester in a real thread, and a mode that offers tools waiting for a person) is
// offered in it, and not in the default standard shell.
func TestInteractiveShellOpensTheResponseItsFlagsDescribe(t *testing.T) {
	bin := mpBuild(t)
	state := filepath.Join(shellTempDir(t), "state")
	startRestartPrimary(t, "primary", bin, state, freeLoopbackAddr(t), "--enable-test-toolkit")
	const script = "mindroom-agent tools call test.identity\n" +
		"mindroom-agent tools list --limit 1000 | grep -o '\"function\":\"ask_questions\"' || echo 'no ask_questions'\nexit\n"

	t.Run("WithAThreadATrustedRequesterAndTheMinimalMode", func(t *testing.T) {
		s := startInteractiveShell(t, bin, state, "--agent", "coder", "--channel", "!room:example.org", "--thread", "$t1",
			"--requester", "@alice:example.org", "--origin", "foreground", "--flag", "requester_trusted,progress_report", "--shell-mode", "minimal")
		s.write(t, script)
		if code := s.wait(t); code != 0 {
			t.Fatalf("exit code %d", code)
		}
		out := s.stdout.String()
		for _, want := range []string{`"agent":"coder"`, `"channel":"!room:example.org"`, `"thread":"$t1"`, `"requester":"@alice:example.org"`,
			`"function":"ask_questions"`} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %s", want)
			}
		}
	})
	t.Run("TheDefaultStandardShellHidesAskQuestions", func(t *testing.T) {
		s := startInteractiveShell(t, bin, state, "--thread", "$t1", "--flag", "requester_trusted")
		s.write(t, script)
		if code := s.wait(t); code != 0 {
			t.Fatalf("exit code %d", code)
		}
		if out := s.stdout.String(); !strings.Contains(out, "no ask_questions") || !strings.Contains(out, `"channel":"terminal"`) {
			t.Errorf("the standard shell offers ask_questions, or is not in the terminal channel")
		}
	})
	t.Run("AMinimalModeThatFailsItsPreflightOpensNothing", func(t *testing.T) {
		s := startInteractiveShell(t, bin, state, "--shell-mode", "minimal", "--worker-key", "absent")
		if code := s.wait(t); code != 1 {
			t.Fatalf("exit code %d", code)
		}
		if out := s.stderr.text(); !strings.Contains(out, "no response was opened") || !strings.Contains(out, `no worker with key "absent" is connected`) ||
			strings.Contains(out, "rpc error") {
			t.Errorf("the refusal does not say why in the primary's words")
		}
	})
}
