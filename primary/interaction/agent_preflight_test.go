package interaction_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/durationpb"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

// TestABackgroundAgentStartsOnlyAfterThePreflight: run_agent_in_background starts its agent in
// the minimal shell mode, so it first runs that mode's preflight for the agent's placement and
// toolkits; a problem refuses the call, listing every problem with its fix, and nothing starts.
func TestABackgroundAgentStartsOnlyAfterThePreflight(t *testing.T) {
	env := start(t, withTestEngine())
	for _, tc := range []struct {
		name    string
		edit    func(*responsev1.OpenResponseRequest)
		problem string
	}{
		{"AToolkitSelectionWithoutTheShellToolkit", func(r *responsev1.OpenResponseRequest) { r.Toolkits = []string{"interaction", "test"} },
			`(1) the response's toolkit selection ("interaction", "test") leaves out the "shell" toolkit, so its shell would have no shell functions. ` +
				`Fix: add "shell" to the response's toolkits, or open it in the standard shell mode.`},
		{"AWorkerKeyWithNoWorker", func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-z" },
			`(1) no worker with key "key-z" is connected. ` +
				`Fix: start a mindroom-worker with key "key-z" and its worker credential, pointed at this primary.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			thread := "$agent-preflight-" + tc.name
			parent := openAs(t, env, stranger, thread, func(r *responsev1.OpenResponseRequest) {
				r.ShellMode = responsev1.ShellMode_SHELL_MODE_STANDARD
			}, tc.edit)
			res, err := env.Runtime.CallTool(context.Background(), &responsev1.CallToolRequest{
				ResponseId: parent, CallId: uuid.NewString(), Toolkit: "interaction", Function: "run_agent_in_background",
				ArgumentsJson: `{"task":"say hi","label":"refused"}`, Wait: durationpb.New(30 * time.Second),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := `"the minimal shell mode cannot be used for agent \"tester\"; no background agent was started. 1 problem(s): ` +
				jsonEscape(tc.problem) + `"`
			if rc := res.GetReceipt(); rc.GetStatus() != responsev1.CallStatus_CALL_STATUS_FAILED || rc.GetOutcomeJson() != want {
				t.Errorf("receipt %s %s\nwant failed %s", rc.GetStatus(), rc.GetOutcomeJson(), want)
			}
			if jobs := jobsIn(t, env, thread); len(jobs) != 0 {
				t.Errorf("a refused agent recorded jobs: %v", jobs)
			}
			for _, r := range env.Primary.Internals().Responses.List() {
				if sp := r.Spec(); sp.Origin == "background" && sp.Thread == thread {
					t.Errorf("a refused agent left its response open: %+v", sp)
				}
			}
		})
	}
}

// jsonEscape is s as the inside of a JSON string (the problems hold quotes).
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
