package bashexec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/turncli/turncli/internal/testpty"
)

// ttyProbe reports whether the process running it can open its controlling terminal.
const ttyProbe = `if { exec 3<>/dev/tty; } 2>/dev/null; then echo reached; else echo none; fi > probe.out`

// TestTheCommandCannotReachTheCallersTerminal: a primary started from a terminal must not
// lend it to agents' commands, which could read it, write to it, or push input into it
// (TIOCSTI) for the operator's shell to run once the primary stops.
func TestTheCommandCannotReachTheCallersTerminal(t *testing.T) {
	t.Parallel()
	tty, _ := testpty.Open(t)
	withTerminal := func(cmd *exec.Cmd) string {
		t.Helper()
		cmd.Dir, cmd.Stdin = t.TempDir(), tty
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
		b, err := os.ReadFile(filepath.Join(cmd.Dir, "probe.out"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	// The control: a process on the terminal reaches it, so the probe can tell.
	if got := withTerminal(exec.Command("bash", "-c", ttyProbe)); got != "reached" {
		t.Fatalf("a process with the terminal as its own: probe says %q, want reached", got)
	}
	// This test's binary on the terminal, running the probe as a command.
	self := exec.Command(os.Args[0], "-test.run=^$")
	self.Env = append(os.Environ(), childEnv+"="+ttyProbe)
	if got := withTerminal(self); got != "none" {
		t.Fatalf("a command of a caller on a terminal: probe says %q, want none", got)
	}
}
