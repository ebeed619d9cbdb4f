package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/turncli/turncli/primary"
)

// Two primaries on one state directory: the second refuses at once, naming the first, and
// changes nothing of its files. A SIGKILLed primary leaves its endpoints.json, which `shell`
// then names as a primary that is not running, but no lock: the next primary starts.
func TestOnePrimaryPerStateDirectory(t *testing.T) {
	bin := mpBuild(t)
	state := filepath.Join(shellTempDir(t), "state")
	first, ep := startRestartPrimary(t, "first", bin, state, "127.0.0.1:0")
	written, err := os.ReadFile(filepath.Join(state, primary.EndpointsFile))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), mpDeadline)
	defer cancel()
	second := exec.CommandContext(ctx, filepath.Join(bin, "mindroom-primary"), "--state-dir", state,
		"--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--agent-cli-listen", "127.0.0.1:0")
	second.Env = mpBaseEnv(t)
	out, err := second.CombinedOutput()
	want := fmt.Sprintf("mindroom-primary: another primary is running on state directory %s (pid %d, gRPC %s, REST %s); stop it first, or give this one another --state-dir\n",
		state, first.proc.cmd.Process.Pid, ep.GRPC, ep.HTTP)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || string(out) != want {
		t.Fatalf("second primary: %v, output %q\nwant exit 1 and %q", err, out, want)
	}
	if now, err := os.ReadFile(filepath.Join(state, primary.EndpointsFile)); err != nil || string(now) != string(written) {
		t.Fatalf("endpoints.json after the second primary: %q (%v), want the first's %q", now, err, written)
	}

	first.proc.stop(t, syscall.SIGKILL)
	shell := exec.CommandContext(ctx, filepath.Join(bin, "mindroom-primary"), "shell", "--state-dir", state)
	shell.Env = mpBaseEnv(t)
	out, err = shell.CombinedOutput()
	want = fmt.Sprintf("mindroom-primary shell: the primary recorded in %s/endpoints.json (pid %d) is not running; start it with `make run` or `mindroom-primary --state-dir %s`\n",
		state, first.proc.cmd.Process.Pid, state)
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || string(out) != want {
		t.Fatalf("shell after SIGKILL: %v, output %q\nwant exit 1 and %q", err, out, want)
	}

	third, _ := startRestartPrimary(t, "third", bin, state, "127.0.0.1:0")
	if code := third.proc.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("third primary exited %d", code)
	}
	if _, err := os.Stat(filepath.Join(state, primary.EndpointsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("endpoints.json after a clean stop: %v, want it removed", err)
	}
}
