package claude

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/client/engines"
)

// stderrKept is how much of the CLI's standard error a failed result quotes.
const stderrKept = 2000

// Run is `mindroom-agent engine claude`: it runs the claude CLI on the brief in
// $MINDROOM_AGENT_TASK (or resumes the session in $MINDROOM_AGENT_RESUME) in the working
// directory, shows its progress on stdout, and ends with the result line. It exits 0 once the
// CLI ran, whatever the result says, and 1 when the CLI could not be started; SIGTERM or
// SIGINT stops the CLI and still writes the result.
func Run(ctx context.Context, agent *client.Agent, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "mindroom-agent engine %s takes no arguments; its brief is in %s\n", Engine, engines.TaskEnv)
		return client.ExitInvalid
	}
	failed := func(why string) int {
		_ = engines.WriteResult(stdout, engines.Result{Engine: Engine, Status: engines.StatusFailed, Errors: []string{engines.Clean(why)}})
		return 1
	}
	s, err := readSettings(getenv)
	if err != nil {
		return failed(err.Error())
	}
	base := os.Environ()
	if s.home == "" {
		// A job that cannot be resumed (on a worker) gets a home for this run only.
		if s.home, err = os.MkdirTemp("", "mindroom-engine-"); err != nil {
			return failed("cannot make the engine's directory: " + err.Error())
		}
		defer os.RemoveAll(s.home)
		base = append(base, engines.HomeEnv+"="+s.home)
	}
	if _, err := prepareHome(s.home); err != nil {
		return failed("cannot prepare the engine's directory: " + err.Error())
	}
	self, err := os.Executable()
	if err != nil {
		return failed("cannot find mindroom-agent's own executable for the MCP server and the hook: " + err.Error())
	}
	cli, err := exec.LookPath("claude")
	if err != nil {
		return failed("the claude CLI is not installed (npm i -g @anthropic-ai/claude-code@2.1.328): " + err.Error())
	}
	inv, err := newInvocation(s, self, base)
	if err != nil {
		return failed(err.Error())
	}

	ctx, stopped := stopOnSignal(ctx)
	defer stopped(nil)
	end, waitErr, stderrTail, err := execute(ctx, cli, inv, stdout)
	if err != nil {
		return failed("cannot start the claude CLI: " + err.Error())
	}

	r := outcome(end, s.home)
	switch {
	case r != nil:
	case ctx.Err() != nil:
		r = &engines.Result{Engine: Engine, Status: engines.StatusFailed, Session: end.session, Errors: []string{context.Cause(ctx).Error()}}
	default:
		r = &engines.Result{Engine: Engine, Status: engines.StatusFailed, Session: end.session, Errors: noResult(waitErr, end.err, stderrTail)}
	}
	_ = engines.WriteResult(stdout, *r)
	return 0
}

// stopOnSignal returns a context that ends, with the cause "stopped by SIGTERM" (or
// SIGINT), when the driver gets that signal, and a function that stops listening.
func stopOnSignal(parent context.Context) (context.Context, func(error)) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			cancel(fmt.Errorf("stopped by %s before the run ended", signalName(sig)))
		case <-done:
		}
	}()
	return ctx, func(err error) {
		signal.Stop(sigs)
		close(done)
		cancel(err)
	}
}

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return sig.String()
}

// noResult says why a CLI that wrote no result event failed: its exit status and the end of
// its standard error.
func noResult(waitErr, readErr error, stderrTail string) []string {
	status := "exited with status 0"
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		status = "ended with " + exit.ProcessState.String()
	case waitErr != nil:
		status = "could not be waited for: " + waitErr.Error()
	}
	errs := []string{"the claude CLI " + status + " without a result"}
	if readErr != nil {
		errs = append(errs, "reading its output failed: "+readErr.Error())
	}
	if t := strings.TrimSpace(stderrTail); t != "" {
		errs = append(errs, "its standard error ends: "+engines.Clean(t))
	}
	return errs
}

// outcome is the Result of a run that ended with a result event; nil when there was none.
func outcome(end streamEnd, home string) *engines.Result {
	ev := end.result
	if ev == nil {
		return nil
	}
	r := &engines.Result{
		Engine: Engine, Status: engines.StatusFinished,
		Report: engines.Clean(ev.Result), Session: ev.SessionID, Turns: ev.NumTurns, CostUSD: ev.TotalCostUSD,
		StopReason: ev.Subtype, IsError: ev.IsError,
	}
	if u := ev.Usage; u != nil {
		r.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		r.OutputTokens = u.OutputTokens
	}
	for _, e := range ev.Errors {
		r.Errors = append(r.Errors, engines.Clean(e))
	}
	if ev.StopReason != deferredStop && ev.DeferredToolUse == nil {
		return r
	}
	// The hook deferred a tool use: the run waits for people. Its subtype says success, so
	// the stop reason is the CLI's own word for the deferral.
	r.StopReason = deferredStop
	p, ok := readParked(home)
	if !ok || (ev.DeferredToolUse != nil && ev.DeferredToolUse.ID != p.ToolUseID) {
		r.Status = engines.StatusFailed
		r.Errors = append(r.Errors, "the claude CLI deferred a tool use that no permission request waits for")
		return r
	}
	r.Status, r.Parked = engines.StatusParked, &p
	return r
}

// deferredStop is the stop reason of a run the hook deferred.
const deferredStop = "tool_deferred"
