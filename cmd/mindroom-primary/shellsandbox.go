package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/shellpriv"
	"github.com/turncli/turncli/primary"
)

// agentShell runs the person's interactive Bash the way the agent's commands run on a primary
// whose shells are isolated: as the agent's own user, in its workspace, in a sandbox with the
// same view (its workspace writable, the state directory and other workspaces absent, a private
// /tmp), so the walkthrough shows what an agent sees. It returns nil, false when this primary
// does not isolate its shells or this process cannot make a sandbox, and the person's Bash runs
// as before. A response on a worker runs the person's Bash here as before too: the worker's
// sandboxes are on its own host.
func agentShell(ctx context.Context, api responsev1.ResponseServiceClient, ep primary.Endpoints, responseID, agent, workerKey string,
	env []string, stdin io.Reader, stdout, stderr io.Writer) (*exec.Cmd, func(), error) {
	if workerKey != "" || !ep.Isolated || !sandbox.Detect().Namespaces {
		return nil, nil, nil
	}
	// A first command makes the workspace, owned by the agent's user, which only the primary
	// gives.
	res, err := api.RunBash(ctx, &responsev1.RunBashRequest{ResponseId: responseID, BashCallId: "shell-prepare", Command: "true"})
	if err != nil {
		return nil, nil, err
	}
	for {
		if _, err := res.Recv(); err == io.EOF {
			break
		} else if err != nil {
			return nil, nil, err
		}
	}
	workspace := filepath.Join(ep.Workspaces, agent)
	var st syscall.Stat_t
	if err := syscall.Stat(workspace, &st); err != nil {
		return nil, nil, fmt.Errorf("the agent's workspace: %w", err)
	}
	if st.Uid == 0 {
		return nil, nil, fmt.Errorf("the agent's workspace %s is root's: the primary does not isolate its shells", workspace)
	}
	stateDir := filepath.Dir(ep.AgentCLIBin)
	view := shellhost.SandboxView(stateDir, ep.Workspaces, ep.AgentCLIBin, ep.AgentBinary, workspace, sandbox.DefaultLimits.TmpBytes)
	sb, err := sandbox.Start(view, sandbox.DefaultLimits)
	if err != nil {
		return nil, nil, err
	}
	// A session of its own, without the person's terminal as its controlling one: a program of
	// the agent's could otherwise push input into that terminal (TIOCSTI) for the person's own
	// shell to run once this one ends. Bash runs without job control there.
	cmd := &exec.Cmd{Path: "/bin/bash", Args: []string{"bash", "--norc", "-i"}, Env: agentEnvironment(env, workspace), Dir: workspace,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if bash, err := exec.LookPath("bash"); err == nil {
		cmd.Path = bash
	}
	if err := shellpriv.StartIn(cmd, &shellpriv.User{Uid: st.Uid, Gid: st.Gid}, sb.Join); err != nil {
		_ = sb.Close()
		return nil, nil, err
	}
	fmt.Fprintf(stderr, "Bash runs as the agent's user %d in %s, in a sandbox as the agent's commands do\n", st.Uid, workspace)
	// Outside the person's process group, Bash hears no Ctrl-C from the terminal; the person's
	// interrupt ends it, as it ends an unsandboxed one (exec.CommandContext).
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	return cmd, func() { stop(); _ = sb.Close() }, nil
}

// agentEnvironment is the shell's environment with the identity variables of the agent's, not
// the person's: its home is its workspace, and its user has no name.
func agentEnvironment(env []string, workspace string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "HOME", "USER", "LOGNAME", "PWD", "OLDPWD":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+workspace)
}
