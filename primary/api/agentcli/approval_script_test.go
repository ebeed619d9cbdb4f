package agentcli_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// scriptExpiry is the call approval expiry of the script's primary: long past the first
// call's denial, which follows its one-second timeout at once, and short enough to wait out.
const scriptExpiry = 10 * time.Second

// TestAScriptBranchesOnWhyAConfirmedCallDidNotRun runs testdata/approval_reasons.sh in a Bash
// command of a response, with the real mindroom-agent and jq: a client timeout leaves the call
// waiting (exit 3), the same call id re-attaches to it, and once an operator denies it the
// script reads outcome.reason approval_denied and outcome.decided_by; a call nobody decides
// ends with approval_expired.
func TestAScriptBranchesOnWhyAConfirmedCallDidNotRun(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed (.ci/run installs it)")
	}
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Responses.CallApprovalExpiry = scriptExpiry }))
	dir := shellprivtest.BinaryDir(t)
	script, err := os.ReadFile(filepath.Join("testdata", "approval_reasons.sh"))
	if err != nil {
		t.Fatal(err)
	}
	scriptPath, ready := filepath.Join(dir, "approval_reasons.sh"), filepath.Join(dir, "ready")
	if err := os.WriteFile(scriptPath, script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(ready, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ready, 0o666); err != nil { // past the umask: the shell's user writes it
		t.Fatal(err)
	}
	responseID := env.Open(t)
	deniedID, expiringID := uuid.NewString(), uuid.NewString()
	calls := env.Primary.Internals().Responses.CallApprovals()

	// The operator denies the first call once the script has re-attached to it.
	denied := make(chan error, 1)
	go func() {
		f, err := os.Open(ready) // blocks until the script opens it, or the test does below
		if err != nil {
			denied <- err
			return
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		if line != "reattached\n" {
			denied <- errors.New("the script never re-attached")
			return
		}
		denied <- deny(calls, responseID, deniedID)
	}()
	run := env.RunBash(t, responseID, "bash-script", "bash "+scriptPath+" "+deniedID+" "+expiringID+" "+ready)
	// Release the reader when the script ended without opening the FIFO.
	if f, err := os.OpenFile(ready, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
	denyErr := <-denied

	if code := run.Result.GetExitCode(); code != 0 || denyErr != nil {
		t.Fatalf("script exited %d (denial: %v)\nstdout:\n%s\nstderr:\n%s", code, denyErr, run.Stdout, run.Stderr)
	}
	want := "denied by ada: Not approved by an operator, not by the requester\n" +
		"expired, decided by null: Approval expired: nobody decided within 10s; the call did not run\nok\n"
	if run.Stdout != want {
		t.Fatalf("script said\n%s\nwant\n%s", run.Stdout, want)
	}
	recs, err := calls.ListCallApprovals(context.Background(), store.CallApprovalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.CallApprovalStatus{}
	for _, rec := range recs {
		got[rec.CallID] = rec.Status
	}
	if len(recs) != 2 || got[deniedID] != store.CallApprovalDenied || got[expiringID] != store.CallApprovalExpired {
		t.Fatalf("call approvals %v; want %s denied and %s expired, and no other", got, deniedID, expiringID)
	}
}

// deny denies the waiting call callID of responseID as operator ada.
func deny(calls *response.CallApprovals, responseID, callID string) error {
	ctx := context.Background()
	recs, err := calls.ListCallApprovals(ctx, store.CallApprovalFilter{Status: store.CallApprovalWaiting, ResponseID: responseID})
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.CallID == callID {
			_, err := calls.Deny(ctx, rec.ID, "ada", "")
			return err
		}
	}
	return errors.New("the re-attached call " + callID + " is not waiting")
}
