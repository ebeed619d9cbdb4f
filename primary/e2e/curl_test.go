package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
)

// curlCall is a tools.call made with curl and the three variables only.
const curlCall = `curl -sS -H "Authorization: Bearer $MINDROOM_AGENT_CLI_TOKEN" ` +
	`-H "X-MindRoom-Agent-CLI-Window: $MINDROOM_AGENT_CLI_WINDOW" ` +
	`-d '{"operation":"tools.call","call_id":"0b5a4f0e-7d4c-4b7e-9a59-1f3c2d4e5f60","toolkit":"test","function":"echo","arguments":{"b":2,"a":"é<>"}}' ` +
	`"$MINDROOM_AGENT_CLI_URL/api/agent-cli/operations"`

func TestBashCommandCallsToolWithCurlUsingOnlyTheThreeVariables(t *testing.T) {
	env := testenv.Start(t)
	id := env.Open(t)
	run := env.RunBash(t, id, "bash-1", curlCall)
	if run.Result.GetExitCode() != 0 {
		t.Fatalf("exit %d, stderr %q", run.Result.GetExitCode(), run.Stderr)
	}
	var receipt map[string]any
	if err := json.Unmarshal([]byte(run.Stdout), &receipt); err != nil {
		t.Fatalf("stdout %q: %v", run.Stdout, err)
	}
	// test.echo settles within the fast-call budget almost always; a loaded machine may answer
	// at the budget with the call still queued.
	if st := receipt["status"]; (st != "completed" && st != "queued") || receipt["parent_bash_call_id"] != "bash-1" {
		t.Errorf("receipt = %v", receipt)
	}
	if !strings.HasPrefix(run.Stdout, `{"attachments":[],"call_id":"0b5a4f0e-7d4c-4b7e-9a59-1f3c2d4e5f60","function":"echo"`) {
		t.Errorf("receipt is not canonical: %s", run.Stdout)
	}
	receipts := run.Result.GetReceipts()
	if len(receipts) != 1 || receipts[0].GetOutcomeJson() != `{"a":"é<>","b":2}` {
		t.Fatalf("window receipts = %v", receipts)
	}
}
