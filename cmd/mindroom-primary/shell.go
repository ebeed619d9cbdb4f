package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary"
)

// shellCommand opens a response on a running primary, runs an interactive Bash inside a window
// of it, and closes both when Bash exits. It is how a person tries mindroom-agent by hand.
func shellCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mindroom-primary shell", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", env("MINDROOM_STATE_DIR", ".turncli"), "state directory of the running primary")
	agent := fs.String("agent", "demo", "agent name of the response")
	mode := fs.String("mode", "minimal", "shell mode: minimal or standard")
	workerKey := fs.String("worker-key", "", "run the response's shells on a worker with this key (default: on the primary)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "mindroom-primary shell:", err)
		return 1
	}
	var ep primary.Endpoints
	data, err := os.ReadFile(filepath.Join(*stateDir, primary.EndpointsFile))
	if err != nil {
		return fail(fmt.Errorf("is the primary running? %w", err))
	}
	if err := json.Unmarshal(data, &ep); err != nil {
		return fail(err)
	}
	token := os.Getenv("MINDROOM_RUNTIME_TOKEN")
	if token == "" {
		raw, err := os.ReadFile(ep.RuntimeTokenFile)
		if err != nil {
			return fail(err)
		}
		token = strings.TrimSpace(string(raw))
	}
	conn, err := grpc.NewClient(ep.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	api := responsev1.NewResponseServiceClient(conn)
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)

	shellMode := responsev1.ShellMode_SHELL_MODE_MINIMAL
	if *mode == "standard" {
		shellMode = responsev1.ShellMode_SHELL_MODE_STANDARD
	}
	opened, err := api.OpenResponse(ctx, &responsev1.OpenResponseRequest{
		AgentName: *agent, RequesterId: os.Getenv("USER"), ShellMode: shellMode, WorkerKey: *workerKey,
		Conversation: &responsev1.Conversation{Channel: "terminal"},
	})
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

	cmd := exec.CommandContext(ctx, "bash", "--norc", "-i")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = shellEnvironment(win.GetEnvironment(), ep.AgentCLIBin)
	_ = cmd.Run() // the shell's exit status is the person's business

	closed, err := api.CloseWindow(context.WithoutCancel(ctx), &responsev1.CloseWindowRequest{ResponseId: opened.GetResponseId(), BashCallId: bashID})
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stderr, "window closed with %d receipt(s)\n", len(closed.GetReceipts()))
	for _, r := range closed.GetReceipts() {
		fmt.Fprintf(stderr, "  %s %s.%s %s\n", r.GetCallId(), r.GetToolkit(), r.GetFunction(), r.GetStatus())
	}
	return 0
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
