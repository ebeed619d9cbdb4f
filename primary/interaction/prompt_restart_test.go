package interaction_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// TestPromptsAcrossARestart stops a primary with prompts in every state and starts another on
// the same state: prompts are still there for people to see, none is actionable any more,
// and only conversation-wide permission allowances remain.
func TestPromptsAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var closedByShutdown, leftPending, decided store.Prompt

	t.Run("FirstPrimary", func(t *testing.T) {
		// A call still waiting when the primary stops: its command ends with the primary
		// (this cleanup, registered first, runs last).
		var stopping submitted
		t.Cleanup(func() {
			if stopping.done != nil {
				stopping.result(t)
			}
		})
		env := start(t, testenv.WithStateDir(dir))
		// Allowed for the whole conversation by an admin, and for one thread by a member.
		for _, c := range []struct {
			thread, tool, decision string
			by                     store.Operator
		}{
			{"$kept", "Read", store.DecisionAllowConversation, adminOp},
			{"$dropped", "Bash", store.DecisionAllowThread, memberOp},
		} {
			id := openAs(t, env, stranger, c.thread)
			sub := submit(t, env, id, "interaction.permission_prompt", map[string]any{"tool_name": c.tool, "input": map[string]any{"n": 1}})
			p := waitPrompt(t, env, sub.callID)
			decide(t, env, p.ID, c.by, c.decision, "")
			if got := settledText(t, env, id, sub.callID); got["behavior"] != "allow" {
				t.Fatalf("%s: %v", c.decision, got)
			}
			sub.result(t)
		}
		id := openAs(t, env, stranger, "$decided")
		sub := submit(t, env, id, "interaction.request_approval", map[string]any{"details": "ship it"})
		decided = decide(t, env, waitPrompt(t, env, sub.callID).ID, adminOp, store.DecisionApprove, "")
		sub.result(t)

		// When the primary stops, the waiting call's response closes and the call closes its
		// prompt itself.
		waiting := openAs(t, env, stranger, "$waiting")
		stopping = submit(t, env, waiting, "interaction.request_approval", map[string]any{"details": "wait for me"})
		closedByShutdown = waitPrompt(t, env, stopping.callID)

		// A prompt a primary that died left pending: nobody waits for it any more.
		var err error
		leftPending, err = env.Primary.Internals().Store.CreatePrompt(ctx, store.NewPrompt{
			Kind: store.PromptApproval, Channel: channel, Thread: "$crashed", Requester: stranger, Agent: agent,
			ResponseID: "gone", CallID: "gone", Title: interaction.DefaultApprovalTitle, Details: "left behind",
			ApproveLabel: "Approve", DenyLabel: "Deny", Deadline: time.Now().Add(time.Hour),
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	env := start(t, testenv.WithStateDir(dir))
	// The primary recovers before it serves anything: once a request is served, boot is over.
	openAs(t, env, stranger, "$served")
	events := watchPrompts(t, env)
	read := func(t *testing.T, id int64) store.Prompt {
		t.Helper()
		p, err := env.Primary.Internals().Interaction.Prompts.Prompt(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("APendingPromptIsExpiredAndCannotBeDecided", func(t *testing.T) {
		p := read(t, leftPending.ID)
		if p.Status != store.PromptExpired || p.Feedback != store.PromptRestartReason || p.Decision != "" || p.DecidedBy != "" {
			t.Fatalf("after the restart %+v, want expired because of the restart (the primary calls Interaction.ExpirePendingPrompts at boot)", p)
		}
		if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, p.ID, adminOp, interaction.PromptDecision{Action: store.DecisionApprove}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("deciding it: %v, want ErrConflict", err)
		}
		audit, err := env.Primary.Internals().Store.ListAudit(ctx, store.AuditFilter{Subject: store.PromptSubject(p.ID)})
		if err != nil || len(audit) != 1 || audit[0].Action != store.ActionPromptExpire || audit[0].Actor != "primary" {
			t.Errorf("audit %+v (%v)", audit, err)
		}
	})

	t.Run("APromptWhoseResponseClosedWasExpiredByItsCall", func(t *testing.T) {
		p := read(t, closedByShutdown.ID)
		if p.Status != store.PromptExpired || p.Feedback == store.PromptRestartReason || p.Feedback == "" {
			t.Fatalf("after the restart %+v, want expired by its call", p)
		}
		if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, p.ID, adminOp, interaction.PromptDecision{Action: store.DecisionDeny}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("deciding it: %v, want ErrConflict", err)
		}
	})

	t.Run("ADecidedPromptIsKeptAsDecided", func(t *testing.T) {
		if p := read(t, decided.ID); !reflect.DeepEqual(p, decided) {
			t.Errorf("after the restart %+v, want %+v", p, decided)
		}
	})

	t.Run("AConversationAllowanceSurvivesAndAThreadAllowanceDoesNot", func(t *testing.T) {
		id := openAs(t, env, stranger, "$kept")
		if got := jsonText(t, callTool(t, env, id, "interaction.permission_prompt", `{"tool_name":"Read","input":{"n":2}}`)); got["behavior"] != "allow" {
			t.Errorf("allowed for the conversation before the restart: %v", got)
		}
		if n := len(promptsIn(t, env, "$kept")); n != 1 {
			t.Errorf("%d prompts in the allowed conversation, want only the first", n)
		}
		id = openAs(t, env, stranger, "$dropped")
		sub := submit(t, env, id, "interaction.permission_prompt", map[string]any{"tool_name": "Bash", "input": map[string]any{"n": 2}})
		p := waitPrompt(t, env, sub.callID)
		decide(t, env, p.ID, memberOp, store.DecisionDeny, "")
		if got := settledText(t, env, id, sub.callID); got["behavior"] != "deny" {
			t.Errorf("asked again after the restart and denied: %v", got)
		}
		sub.result(t)
	})

	t.Run("ExpirePendingPromptsPublishesEachExpiry", func(t *testing.T) {
		p, err := env.Primary.Internals().Store.CreatePrompt(ctx, store.NewPrompt{
			Kind: store.PromptPermission, Channel: channel, Thread: "$boot", ToolName: "Bash",
			MaskedInput: []byte(`{}`), Deadline: time.Now().Add(time.Hour),
		})
		if err != nil {
			t.Fatal(err)
		}
		expired, err := env.Primary.Internals().Interaction.Prompts.ExpirePendingPrompts(ctx)
		if err != nil || len(expired) != 1 || expired[0].ID != p.ID || expired[0].Status != store.PromptExpired {
			t.Fatalf("expired %+v (%v), want prompt %d", expired, err, p.ID)
		}
		if kinds := events.kindsUntil(t, p.ID, "prompt.expired"); !reflect.DeepEqual(kinds, []string{"prompt.expired"}) {
			t.Errorf("live feed %v", kinds)
		}
		if again, err := env.Primary.Internals().Interaction.Prompts.ExpirePendingPrompts(ctx); err != nil || len(again) != 0 {
			t.Errorf("a second call expired %v (%v), want none", again, err)
		}
	})
}
