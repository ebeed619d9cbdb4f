package keyring

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

const printSessionEnv = "KEYRING_TEST_PRINT_SESSION"

func TestMain(m *testing.M) {
	if os.Getenv(printSessionEnv) != "" {
		id, err := SessionID()
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(id)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childSession starts this test binary, which prints the session keyring it was given.
func childSession(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), printSessionEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestEachJoinGivesTheNextChildANewSessionKeyring: children started from a thread after
// JoinNew hold a keyring neither the process's other threads nor the children started after
// the next JoinNew hold.
func TestEachJoinGivesTheNextChildANewSessionKeyring(t *testing.T) {
	// Never unlocked: the thread, left with a keyring of its own, ends with the test.
	runtime.LockOSThread()
	own, err := SessionID()
	if err != nil {
		t.Skipf("keyrings are refused here: %v", err)
	}
	if before := childSession(t); before != fmt.Sprint(own) {
		t.Fatalf("a child before any join holds %s, want the process's %d: the test cannot tell", before, own)
	}
	seen := map[string]bool{fmt.Sprint(own): true}
	for range 2 {
		if err := JoinNew(); err != nil {
			t.Fatal(err)
		}
		got := childSession(t)
		if seen[got] {
			t.Fatalf("a child after a join holds session keyring %s, held before", got)
		}
		seen[got] = true
	}
}
