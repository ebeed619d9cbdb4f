package codex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/client/engines"
)

// engineName is the engine's name in the result.
const engineName = "codex"

// stopGrace is how long the server gets to end an interrupted turn, and then to exit once its
// input is closed, before it is killed.
const stopGrace = 5 * time.Second

// errStopped: a signal stopped the driver.
var errStopped = errors.New("the run was stopped by a signal before the turn completed")

// Run is `mindroom-agent engine codex`, a client.EngineDriver. It takes no arguments.
func Run(ctx context.Context, agent *client.Agent, args []string, _ io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "mindroom-agent engine codex takes no arguments; the brief is in %s\n", engines.TaskEnv)
		return client.ExitInvalid
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	out := &printer{w: stdout}
	res, started := run(ctx, agent, out, stderr, getenv)
	res.Engine = engineName
	if err := engines.WriteResult(stdout, res); err != nil {
		fmt.Fprintf(stderr, "writing the result: %v\n", err)
		return client.ExitUnavailable
	}
	if !started {
		return client.ExitUnavailable
	}
	return 0
}

// failed is a failed result saying why.
func failed(why ...string) engines.Result {
	return engines.Result{Status: engines.StatusFailed, IsError: true, Errors: why}
}

// run runs the turn. started is false when the CLI could not be started.
func run(ctx context.Context, agent *client.Agent, out *printer, stderr io.Writer, getenv func(string) string) (res engines.Result, started bool) {
	brief := getenv(engines.TaskEnv)
	if strings.TrimSpace(brief) == "" {
		return failed(engines.TaskEnv + " is empty: there is no brief"), false
	}
	home := getenv(engines.HomeEnv)
	if home == "" {
		// A job the primary gives no home (on a worker, where a run is never resumed) gets
		// one for this run only.
		tmp, err := os.MkdirTemp("", "mindroom-engine-")
		if err != nil {
			return failed("creating the engine's home: " + err.Error()), false
		}
		defer os.RemoveAll(tmp)
		home = tmp
	}
	codexHome := filepath.Join(home, "codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return failed("creating the engine's home: " + err.Error()), false
	}
	if err := os.Chmod(codexHome, 0o700); err != nil {
		return failed("creating the engine's home: " + err.Error()), false
	}
	self, err := os.Executable()
	if err != nil {
		return failed("finding mindroom-agent for the MCP server: " + err.Error()), false
	}
	if err := writeConfig(codexHome, settings{mcpCommand: self, baseURL: getenv(baseURLEnv), model: getenv(modelEnv)}); err != nil {
		return failed("writing Codex's configuration: " + err.Error()), false
	}
	cli, err := lookPath("codex", getenv("PATH"))
	if err != nil {
		return failed(err.Error()), false
	}
	wd, err := os.Getwd()
	if err != nil {
		return failed("finding the working directory: " + err.Error()), false
	}

	cmd := exec.Command(cli, "app-server")
	cmd.Dir, cmd.Env = wd, cliEnv(getenv, codexHome)
	cmd.WaitDelay = stopGrace
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return failed(err.Error()), false
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		return failed(err.Error()), false
	}
	tail := &stderrTail{w: stderr}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		return failed("starting codex app-server: " + err.Error()), false
	}

	// A signal ends the waits for people at once: each approval is declined, so the server
	// is free to end the interrupted turn.
	askCtx, stopAsking := context.WithCancel(ctx)
	conn := newRPCConn(stdin)
	d := newDriver(askCtx, agent, conn, out)
	readDone := make(chan error, 1)
	go func() { readDone <- conn.readLoop(stdoutPipe, d.onRequest, d.onNotify) }()

	turnErr := d.start(ctx, brief, wd)
	if turnErr != nil && ctx.Err() != nil {
		turnErr = errStopped
	}
	if turnErr == nil {
		turnErr = d.follow(ctx, readDone)
	}
	// Stop: end the waits for people, close the server's input (it exits at its end), and
	// kill it when it does not. Its output is closed too, in case a process the kill missed
	// holds it open.
	stopAsking()
	stdin.Close()
	select {
	case <-readDone:
	case <-time.After(stopGrace):
		kill(cmd)
		stdoutPipe.Close()
		<-readDone
	}
	waitErr := cmd.Wait()
	d.asking.Wait()
	return d.result(turnErr, waitErr, tail.String()), true
}

// start opens the connection, the thread and the turn.
func (d *driver) start(ctx context.Context, brief, wd string) error {
	hello := map[string]any{
		"clientInfo":   map[string]any{"name": "mindroom-agent", "title": "turncli", "version": "1"},
		"capabilities": map[string]any{"experimentalApi": false, "requestAttestation": false},
	}
	if err := d.conn.call(ctx, "initialize", hello, nil); err != nil {
		return err
	}
	if err := d.conn.notify("initialized", nil); err != nil {
		return err
	}
	var thread struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	err := d.conn.call(ctx, "thread/start", map[string]any{
		"cwd": wd, "approvalPolicy": "on-request", "sandbox": "workspace-write",
	}, &thread)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.threadID = thread.Thread.ID
	d.mu.Unlock()
	d.out.line("thread", "%s", thread.Thread.ID)
	var turn struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	err = d.conn.call(ctx, "turn/start", map[string]any{
		"threadId": thread.Thread.ID,
		"input":    []any{map[string]any{"type": "text", "text": brief, "text_elements": []any{}}},
	}, &turn)
	if err != nil {
		return err
	}
	d.mu.Lock()
	if d.turnID == "" {
		d.turnID = turn.Turn.ID
	}
	d.mu.Unlock()
	return nil
}

// follow waits until the turn completes, the server's output ends, or ctx does; then it
// interrupts the turn and gives it stopGrace to complete.
func (d *driver) follow(ctx context.Context, readDone chan error) error {
	select {
	case <-d.turnDone:
		return nil
	case err := <-readDone:
		readDone <- err // for the shutdown
		return serverEnded(err)
	case <-ctx.Done():
	}
	d.out.line("stopped", "interrupting the turn")
	d.mu.Lock()
	params := map[string]any{"threadId": d.threadID, "turnId": d.turnID}
	d.mu.Unlock()
	ictx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	_ = d.conn.call(ictx, "turn/interrupt", params, nil)
	select {
	case <-d.turnDone:
	case err := <-readDone:
		readDone <- err
	case <-ictx.Done():
	}
	return errStopped
}

func serverEnded(err error) error {
	if err != nil {
		return fmt.Errorf("reading the app-server: %w", err)
	}
	return errors.New("the codex app-server ended before the turn completed")
}

// result is how the run went.
func (d *driver) result(turnErr, waitErr error, stderrTail string) engines.Result {
	d.mu.Lock()
	defer d.mu.Unlock()
	res := engines.Result{
		Session: d.threadID, InputTokens: d.inputTokens, OutputTokens: d.outputTokens,
		StopReason: d.turnStatus, Errors: append([]string(nil), d.errors...),
	}
	if d.turnStatus != "" {
		res.Turns = 1
	}
	switch {
	case turnErr != nil:
		res.Status, res.IsError = engines.StatusFailed, true
		res.Errors = append(res.Errors, engines.Clean(turnErr.Error()))
		if !errors.Is(turnErr, errStopped) {
			if waitErr != nil {
				res.Errors = append(res.Errors, "codex app-server: "+waitErr.Error())
			}
			if stderrTail != "" {
				res.Errors = append(res.Errors, "standard error of codex app-server ends with:\n"+stderrTail)
			}
		}
	case d.turnStatus == "completed":
		res.Status = engines.StatusFinished
	case d.turnStatus == "failed" && d.report != "":
		res.Status, res.IsError = engines.StatusFinished, true
	default: // failed without a message, or interrupted
		res.Status, res.IsError = engines.StatusFailed, true
		if len(res.Errors) == 0 {
			res.Errors = []string{"the turn ended " + d.turnStatus}
		}
	}
	res.Report = engines.Clean(d.report)
	for i, e := range res.Errors {
		res.Errors[i] = engines.Clean(e)
	}
	return res
}

// lookPath finds name on path, the job's PATH (not this process's).
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("the codex CLI is not on PATH: install it with npm i -g @openai/codex@0.169.0 (Node.js 18 or newer)")
}
