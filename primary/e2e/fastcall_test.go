package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
)

// TestFastCallsAreAnsweredInOneRequest: a call that settles within the fast-call budget is
// answered terminal by its POST, so neither mindroom-agent nor a client that polls needs a
// second request; a slow call is answered as it stands when the budget passes, and
// `--timeout 0` still prints that submission receipt at once. The budget here is generous so
// the fast tool settles within it however loaded the machine is.
func TestFastCallsAreAnsweredInOneRequest(t *testing.T) {
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Responses.FastCallBudget = time.Second }))

	t.Run("FastToolOneRequest", func(t *testing.T) {
		proxy := startForwarder(t, env, nil)
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-1",
			`MINDROOM_AGENT_CLI_URL=`+proxy.URL+` mindroom-agent tools call test.echo '{"fast":true}' --call-id `+agentCallA)
		expectOutput(t, int(run.Result.GetExitCode()), run.Stdout, run.Stderr,
			0, receiptLine(agentCallA, "echo", `{"fast":true}`, "bash-1", "completed"), "")
		got := proxy.Requests()
		if len(got) != 1 || got[0].Method != http.MethodPost || got[0].Path != "/api/agent-cli/operations" {
			t.Errorf("requests = %+v, want the POST alone", got)
		}
	})

	t.Run("SlowToolTimeoutZeroPrintsTheSubmissionReceipt", func(t *testing.T) {
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-2",
			`mindroom-agent tools call test.gate '{"name":"fast-call-slow"}' --call-id `+agentCallA+` --timeout 0; echo "exit $?"; `+
				`mindroom-agent tools call test.release '{"name":"fast-call-slow"}' >/dev/null`)
		want := receiptLine(agentCallA, "gate", "null", "bash-2", "queued") + "\nexit 3\n"
		wantRunning := receiptLine(agentCallA, "gate", "null", "bash-2", "running") + "\nexit 3\n"
		if run.Stdout != want && run.Stdout != wantRunning {
			t.Errorf("stdout:\n got %s want %s (or running)", run.Stdout, want)
		}
	})
}
