package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/cliflag"
	"github.com/turncli/turncli/internal/loopback"
	"github.com/turncli/turncli/internal/statedir"
)

// shellCommand opens a response on a running primary, runs an interactive Bash inside a window
// of it, and closes both when Bash exits: the window once every call it admitted has settled
// (closeWindow says what it waits for, and cancels on request), then the response. It is how a
// person tries mindroom-agent by hand.
func shellCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	stateDir, open, err := shellFlags(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		if !errors.Is(err, cliflag.ErrReported) {
			fmt.Fprintln(stderr, "mindroom-primary shell:", err)
		}
		return 2
	}
	fail := func(err error) int {
		if st, ok := status.FromError(err); ok {
			err = errors.New(st.Message()) // the primary's words, without the RPC's wrapping
		}
		fmt.Fprintln(stderr, "mindroom-primary shell:", err)
		return 1
	}
	ep, err := statedir.Read(stateDir)
	if err != nil {
		return fail(err)
	}
	token := os.Getenv("MINDROOM_RUNTIME_TOKEN")
	if token == "" {
		raw, err := statedir.ReadPrivate(ep.RuntimeTokenFile)
		if err != nil {
			return fail(err)
		}
		token = strings.TrimSpace(string(raw))
	}
	if !loopback.Addr(ep.GRPC) {
		// The shell speaks plain gRPC: the runtime's credential goes to loopback only.
		return fail(fmt.Errorf("refusing to send the runtime credential in clear to %s, which is not on loopback", ep.GRPC))
	}
	conn, err := grpc.NewClient(ep.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	api := responsev1.NewResponseServiceClient(conn)
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)

	opened, err := api.OpenResponse(ctx, open)
	if err != nil {
		return fail(err)
	}
	defer api.CloseResponse(context.WithoutCancel(ctx), &responsev1.CloseResponseRequest{ResponseId: opened.GetResponseId()})
	bashID := "shell-" + uuid.NewString()[:8]
	win, err := api.OpenWindow(ctx, &responsev1.OpenWindowRequest{ResponseId: opened.GetResponseId(), BashCallId: bashID})
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stderr, "response %s, window %s — try: mindroom-agent tools list\n", opened.GetResponseId(), bashID)

	env := shellEnvironment(win.GetEnvironment(), ep.AgentCLIBin)
	sandboxed, done, err := agentShell(ctx, api, ep, opened.GetResponseId(), open.GetAgentName(), open.GetWorkerKey(), env, stdin, stdout, stderr)
	switch {
	case err != nil:
		return fail(fmt.Errorf("the agent's sandbox: %w", err))
	case sandboxed != nil:
		_ = sandboxed.Wait() // the shell's exit status is the person's business
		done()
	default:
		cmd := exec.CommandContext(ctx, "bash", "--norc", "-i")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		cmd.Env = env
		_ = cmd.Run()
	}

	receipts, err := closeWindow(ctx, api, opened.GetResponseId(), bashID, stdin, stderr)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stderr, "window closed with %d receipt(s)\n", len(receipts))
	for _, r := range receipts {
		fmt.Fprintf(stderr, "  %s %s.%s %s\n", r.GetCallId(), r.GetToolkit(), r.GetFunction(), statusName(r.GetStatus()))
	}
	return 0
}

// shellFlags reads the shell subcommand's flags: the state directory of the running primary and
// the response to open, with every field a runtime gives (agent, requester, conversation, shell
// mode, worker key, origin, flags), so each tool can be tried by hand.
func shellFlags(args []string, stdout, stderr io.Writer) (string, *responsev1.OpenResponseRequest, error) {
	fs := flag.NewFlagSet("mindroom-primary shell", flag.ContinueOnError)
	stateDir := fs.String("state-dir", cliflag.Env("MINDROOM_STATE_DIR", ".turncli"), "state directory of the running primary")
	agent := fs.String("agent", "demo", "agent name of the response")
	requester := fs.String("requester", os.Getenv("USER"), "requester id: the person the response answers (an operator of that name answers ask_questions)")
	channel := fs.String("channel", "terminal", "conversation channel (room) id")
	thread := fs.String("thread", "", "conversation thread id; empty is the channel's main timeline (ask_questions needs a thread)")
	mode := fs.String("shell-mode", "", "standard (only tools that finish inside the command) or minimal (every tool, also those that need confirmation or a person, such as ask_questions); empty takes the mode stored for the conversation and agent, standard when none is")
	workerKey := fs.String("worker-key", "", "run the response's shells on a worker with this key (default: on the primary)")
	origin := fs.String("origin", "foreground", "why the turn runs: foreground, background, scheduled, recovery or api")
	var flags []string
	fs.Func("flag", "a response flag such as requester_trusted, progress_report or clean; repeat it or give a comma-separated list", func(v string) error {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				flags = append(flags, f)
			}
		}
		return nil
	})
	if err := cliflag.Parse(fs, args, stdout, stderr); err != nil {
		return "", nil, err
	}
	if fs.NArg() > 0 {
		return "", nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	shellMode, ok := shellModes[*mode]
	if !ok {
		return "", nil, fmt.Errorf("--shell-mode must be standard or minimal, not %q", *mode)
	}
	o, ok := origins[*origin]
	if !ok {
		return "", nil, fmt.Errorf("--origin must be foreground, background, scheduled, recovery or api, not %q", *origin)
	}
	return *stateDir, &responsev1.OpenResponseRequest{
		AgentName: *agent, RequesterId: *requester, ShellMode: shellMode, WorkerKey: *workerKey, Origin: o, Flags: flags,
		Conversation: &conversationv1.Conversation{Channel: *channel, Thread: *thread},
	}, nil
}

var shellModes = map[string]responsev1.ShellMode{
	"":         responsev1.ShellMode_SHELL_MODE_UNSPECIFIED,
	"standard": responsev1.ShellMode_SHELL_MODE_STANDARD,
	"minimal":  responsev1.ShellMode_SHELL_MODE_MINIMAL,
}

var origins = map[string]responsev1.Origin{
	"foreground": responsev1.Origin_ORIGIN_FOREGROUND,
	"background": responsev1.Origin_ORIGIN_BACKGROUND,
	"scheduled":  responsev1.Origin_ORIGIN_SCHEDULED,
	"recovery":   responsev1.Origin_ORIGIN_RECOVERY,
	"api":        responsev1.Origin_ORIGIN_API,
}

// closeWindow tells the primary the shell has exited and returns the window's receipts once it
// has closed, which is when every call it admitted has settled. While calls are unsettled it
// says which, and the person may stop waiting: Ctrl-C (ctx ends), "exit" or the end of input
// closes the response, which cancels and joins its admitted work; then the window closes.
// Any other line of input says again what the window waits for.
func closeWindow(ctx context.Context, api responsev1.ResponseServiceClient, responseID, bashID string, stdin io.Reader, stderr io.Writer) ([]*responsev1.Receipt, error) {
	bg := context.WithoutCancel(ctx)
	done := make(chan windowClosed, 1) // every return below has received from it
	go func() {
		resp, err := api.CloseWindow(bg, &responsev1.CloseWindowRequest{ResponseId: responseID, BashCallId: bashID})
		done <- windowClosed{resp.GetReceipts(), err}
	}()
	waiting := func() bool {
		w, err := api.GetWindow(bg, &responsev1.GetWindowRequest{ResponseId: responseID, BashCallId: bashID})
		// Offer to cancel only once the primary has taken CloseWindow (the window drains):
		// closing the response before that would leave CloseWindow nothing to report. Stop
		// looking when CloseWindow answered (done holds its answer) or the person gave up.
		for err == nil && w.GetState() == responsev1.WindowState_WINDOW_STATE_OPEN && len(done) == 0 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
			w, err = api.GetWindow(bg, &responsev1.GetWindowRequest{ResponseId: responseID, BashCallId: bashID})
		}
		if err != nil {
			return false // closed meanwhile, or the primary went away: CloseWindow says which
		}
		msg := waitingFor(w)
		if msg != "" {
			fmt.Fprintln(stderr, msg)
		}
		return msg != ""
	}
	var lines <-chan string
	if waiting() {
		stop := make(chan struct{})
		defer close(stop)
		lines = readLines(stdin, stop)
	}
	for {
		select {
		case c := <-done:
			return c.receipts, c.err
		case <-ctx.Done():
			return cancelWindow(bg, api, responseID, stderr, done)
		case line, ok := <-lines:
			if !ok || strings.TrimSpace(line) == "exit" {
				return cancelWindow(bg, api, responseID, stderr, done)
			}
			waiting()
		}
	}
}

// windowClosed is what CloseWindow answered.
type windowClosed struct {
	receipts []*responsev1.Receipt
	err      error
}

// cancelWindow closes the response, which cancels and joins its admitted work so the window
// closes, and returns what the pending CloseWindow (answering on done) reports.
func cancelWindow(ctx context.Context, api responsev1.ResponseServiceClient, responseID string, stderr io.Writer, done <-chan windowClosed) ([]*responsev1.Receipt, error) {
	fmt.Fprintln(stderr, "cancelling the window's calls: closing the response")
	_, closeErr := api.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: responseID})
	c := <-done
	if status.Code(c.err) == codes.NotFound && closeErr == nil {
		// The response closed before the primary took CloseWindow: its receipts are gone.
		return nil, errors.New("the response was closed and its calls cancelled before the window reported its receipts")
	}
	return c.receipts, errors.Join(c.err, closeErr)
}

// waitingFor says what an unclosed window waits for and how to stop waiting; "" when it waits
// for nothing.
func waitingFor(w *responsev1.GetWindowResponse) string {
	if w.GetState() == responsev1.WindowState_WINDOW_STATE_CLOSED || w.GetUnsettled() == 0 {
		return ""
	}
	var calls []string
	for _, r := range w.GetReceipts() {
		switch r.GetStatus() {
		case responsev1.CallStatus_CALL_STATUS_COMPLETED, responsev1.CallStatus_CALL_STATUS_FAILED, responsev1.CallStatus_CALL_STATUS_CANCELLED:
		default:
			calls = append(calls, fmt.Sprintf("%s.%s %s (%s)", r.GetToolkit(), r.GetFunction(), r.GetCallId(), statusName(r.GetStatus())))
		}
	}
	var what []string
	if n := len(calls); n > 0 {
		what = append(what, fmt.Sprintf("%d %s to finish: %s", n, plural(n, "call", "calls"), strings.Join(calls, ", ")))
	}
	if n := int(w.GetUnsettled()) - len(calls); n > 0 {
		what = append(what, fmt.Sprintf("%d %s to finish", n, plural(n, "describe", "describes")))
	}
	them := plural(int(w.GetUnsettled()), "it", "them")
	return fmt.Sprintf("the shell has exited; its window waits for %s. Press Ctrl-C, or type exit, to cancel %s (this closes the response).",
		strings.Join(what, " and "), them)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// statusName is a call status as receipts spell it: queued, running, waiting, completed, ….
func statusName(s responsev1.CallStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "CALL_STATUS_"))
}

// readLines sends each line read from r until the end of input (then closes the channel) or
// until stop is closed. A read blocks until a line or the end of input arrives, so the
// goroutine ends at the next line after stop, or when the process exits.
func readLines(r io.Reader, stop <-chan struct{}) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if line != "" || err == nil {
				select {
				case out <- line:
				case <-stop:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return out
}

// shellEnvironment is the person's own environment, minus any MINDROOM_ variables, plus the
// window's three variables and agent_cli_bin/ first on PATH.
func shellEnvironment(window map[string]string, binDir string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "MINDROOM_") || name == "PATH" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "PS1=(turncli) \\w\\$ ")
	for k, v := range window {
		out = append(out, k+"="+v)
	}
	return out
}
