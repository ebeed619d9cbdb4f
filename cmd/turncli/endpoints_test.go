package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A primary killed without cleanup leaves its endpoints.json behind: the CLI says the primary
// is not running instead of printing the error of a connection to nothing.
func TestAStoppedPrimarysEndpointsAreNamedNotRunning(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	pid := gone.Process.Pid
	dir := t.TempDir()
	ep := `{"grpc":"127.0.0.1:1","operator_token_file":"/nonexistent","pid":` + strconv.Itoa(pid) + `}`
	if err := os.WriteFile(filepath.Join(dir, "endpoints.json"), []byte(ep), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"whoami", "--state-dir", dir}, strings.NewReader(""), &out, &errOut)
	want := fmt.Sprintf("the primary recorded in %s/endpoints.json (pid %d) is not running; start it with `make run` or `mindroom-primary --state-dir %s` (or give --addr and --token-file)", dir, pid, dir)
	if code != exitFailed || !strings.Contains(errOut.String(), want) {
		t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut.String(), exitFailed, want)
	}
}
