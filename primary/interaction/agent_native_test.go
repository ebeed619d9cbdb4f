package interaction_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/durationpb"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// TestBackgroundAgentOfAStandardTurnReachesTheControls: a standard turn starts a background
// agent natively (its shell cannot), and the agent's engine, whose tools are its native ones,
// asks for an approval the standard shell could not see; the decision reaches its report.
func TestBackgroundAgentOfAStandardTurnReachesTheControls(t *testing.T) {
	env := start(t, withTestEngine())
	addAuthors(t, env)
	const thread = "$agent-standard"
	parent := openAs(t, env, stranger, thread, func(r *responsev1.OpenResponseRequest) {
		r.ShellMode = responsev1.ShellMode_SHELL_MODE_STANDARD
	})
	refused(t, callTool(t, env, parent, "interaction.run_agent_in_background", `{"task":"say hi"}`), "is not offered in this shell", "as a direct tool call")
	res, err := env.Runtime.CallTool(context.Background(), &responsev1.CallToolRequest{
		ResponseId: parent, CallId: uuid.NewString(), Toolkit: "interaction", Function: "run_agent_in_background",
		ArgumentsJson: `{"task":"call interaction.request_approval {\"details\":\"from the agent\"}","label":"asker"}`,
		Wait:          durationpb.New(30 * time.Second),
	})
	if err != nil || res.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
		t.Fatalf("native run_agent_in_background = %v, %v", res, err)
	}
	var prompt store.Prompt
	for deadline := time.Now().Add(waitBound); prompt.ID == 0; time.Sleep(pollEvery) {
		for _, p := range promptsIn(t, env, thread) {
			if p.Kind == store.PromptApproval && strings.Contains(p.Details, "from the agent") {
				prompt = p
			}
		}
		if prompt.ID == 0 && time.Now().After(deadline) {
			t.Fatal("the background agent's approval never reached the operators")
		}
	}
	// The agent keeps its tools for as long as its job may run, not a turn's 24 hours.
	found := false
	for _, r := range env.Primary.Internals().Responses.List() {
		if sp := r.Spec(); sp.Origin == "background" && sp.Thread == thread {
			found = true
			if left := time.Until(r.GrantExpires()); left < env.Primary.Internals().Jobs.AgentLifetime()-time.Minute {
				t.Errorf("the agent's grant expires in %v, before its job's lifetime %v", left, env.Primary.Internals().Jobs.AgentLifetime())
			}
		}
	}
	if !found {
		t.Error("the agent's response is not open while it waits")
	}
	if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(context.Background(), prompt.ID, adminOp,
		interaction.PromptDecision{Action: store.DecisionApprove}); err != nil {
		t.Fatal(err)
	}
	jobs := jobsIn(t, env, thread)
	if len(jobs) != 1 {
		t.Fatalf("jobs in the thread: %v", jobs)
	}
	c := waitContinuation(t, env, jobKey(jobs[0].ID))
	if !strings.Contains(c.Text, `\"approved\":true`) && !strings.Contains(c.Text, `"approved":true`) {
		t.Errorf("the report does not carry the decision: %q", c.Text)
	}
}
