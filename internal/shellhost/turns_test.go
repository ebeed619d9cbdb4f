package shellhost_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/internal/shellhost"
)

// TestEachResponseKeepsASandboxOfItsOwnUntilReleased: the first commands of several responses,
// started at once, each make their response's sandbox; a response's later commands find what
// its earlier ones left in its /tmp, and no other response's; once released, a response's next
// command starts in a fresh sandbox.
func TestEachResponseKeepsASandboxOfItsOwnUntilReleased(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sandboxes need root")
	}
	if s := sandbox.Detect(); !s.Namespaces {
		t.Skipf("no sandboxes here: %s", s.Reason)
	}
	home := t.TempDir()
	state := filepath.Join(home, "state")
	iso, _, err := shellhost.IsolationConfig{Mode: shellhost.IsolationRequired}.Build(state)
	if err != nil {
		t.Fatal(err)
	}
	r, err := shellhost.New(shellhost.Config{Settings: shellhost.Settings{AgentBinary: "/bin/true"}, StateDir: state, AgentCLIURL: "http://127.0.0.1:1", Sandboxing: iso})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	run := func(response, agent, script string) (string, error) {
		var out bytes.Buffer
		var mu sync.Mutex
		res, err := r.Run(context.Background(), shellhost.Command{Response: response, Agent: agent, Command: script}, func(_ bashexec.Stream, b []byte) {
			mu.Lock()
			out.Write(b)
			mu.Unlock()
		})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit %d: %q", res.ExitCode, out.String())
		}
		return out.String(), err
	}

	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = run(fmt.Sprint("resp-", i), "agent-a", fmt.Sprintf("echo resp-%d > /tmp/mine", i))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("the first command of resp-%d: %v", i, err)
		}
	}
	for i := range n {
		out, err := run(fmt.Sprint("resp-", i), "agent-a", "cat /tmp/mine")
		if want := fmt.Sprintf("resp-%d\n", i); err != nil || out != want {
			t.Fatalf("resp-%d's second command read %q (%v), want %q", i, out, err, want)
		}
	}
	if _, err := run("resp-1", "agent-b", "true"); err == nil || err.Error() != `response resp-1 runs agent "agent-a", not "agent-b"` {
		t.Fatalf("another agent's command in resp-1: %v", err)
	}
	r.Release("resp-0")
	if out, err := run("resp-0", "agent-a", "cat /tmp/mine 2>/dev/null || echo fresh"); err != nil || out != "fresh\n" {
		t.Fatalf("resp-0's command after its release read %q (%v), want a fresh /tmp", out, err)
	}
}
