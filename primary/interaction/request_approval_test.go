package interaction_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// TestRequestApproval asks for approvals from real Bash with the real mindroom-agent and
// decides them as the operator API does.
func TestRequestApproval(t *testing.T) {
	env := start(t)
	ctx := context.Background()
	events := watchPrompts(t, env)

	// ask submits request_approval with --timeout 0 and checks what the client printed at
	// once and what people see while the call waits: the prompt, and a waiting receipt.
	ask := func(t *testing.T, thread string, args map[string]any) (string, submitted, store.Prompt) {
		t.Helper()
		id := openAs(t, env, stranger, thread)
		sub := submit(t, env, id, "interaction.request_approval", args)
		p := waitPrompt(t, env, sub.callID)
		if p.Status != store.PromptPending || p.Kind != store.PromptApproval || p.Channel != channel || p.Thread != thread ||
			p.Requester != stranger || p.Agent != agent || p.ResponseID != id {
			t.Errorf("posted prompt %+v", p)
		}
		if got := waitStatus(t, env, id, sub.callID, "waiting"); got.code != 3 {
			t.Errorf("calls get of a waiting call: %s, want exit 3", got)
		}
		return id, sub, p
	}
	// submittedAtOnce checks the --timeout 0 command: exit 3 with the live receipt.
	submittedAtOnce := func(t *testing.T, sub submitted) {
		t.Helper()
		r := sub.result(t)
		if r.code != 3 || (r.status != "queued" && r.status != "running" && r.status != "waiting") || r.outcome != nil {
			t.Errorf("tools call --timeout 0: %s, want exit 3 with a queued, running or waiting receipt", r)
		}
	}

	t.Run("ApprovedByAnAdmin", func(t *testing.T) {
		id, sub, p := ask(t, "$approve", map[string]any{"details": "  ship it  "})
		want := store.Prompt{Title: interaction.DefaultApprovalTitle, Details: "ship it", ApproveLabel: "Approve", DenyLabel: "Deny"}
		if p.Title != want.Title || p.Details != want.Details || p.ApproveLabel != want.ApproveLabel || p.DenyLabel != want.DenyLabel {
			t.Errorf("texts %q %q %q %q, want the trimmed details and the defaults", p.Title, p.Details, p.ApproveLabel, p.DenyLabel)
		}
		if d := p.Deadline.Sub(p.CreatedAt); d < interaction.DefaultPromptWait-time.Second || d > interaction.DefaultPromptWait+time.Second {
			t.Errorf("deadline %v after creation, want about %v", d, interaction.DefaultPromptWait)
		}
		decided := decide(t, env, p.ID, adminOp, store.DecisionApprove, "")
		if decided.Status != store.PromptApproved || decided.DecidedBy != adminAuthor || decided.Decision != store.DecisionApprove {
			t.Errorf("decided %+v", decided)
		}
		submittedAtOnce(t, sub)
		got := settledText(t, env, id, sub.callID)
		if want := map[string]any{"approved": true, "feedback": "", "decided_by": adminAuthor}; !reflect.DeepEqual(got, want) {
			t.Errorf("result %v, want %v", got, want)
		}
		if kinds := events.kindsUntil(t, p.ID, "prompt.decided"); !reflect.DeepEqual(kinds, []string{"prompt.created", "prompt.decided"}) {
			t.Errorf("live feed %v", kinds)
		}
		if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, p.ID, adminOp, interaction.PromptDecision{Action: store.DecisionDeny}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second decision: %v, want ErrConflict", err)
		}
	})

	t.Run("DeniedWithAReasonByAMember", func(t *testing.T) {
		id, sub, p := ask(t, "$deny", map[string]any{"details": "drop the table", "title": "Schema change",
			"approve_label": "Go", "deny_label": "Stop"})
		if p.Title != "Schema change" || p.ApproveLabel != "Go" || p.DenyLabel != "Stop" {
			t.Errorf("texts %q %q %q", p.Title, p.ApproveLabel, p.DenyLabel)
		}
		decide(t, env, p.ID, memberOp, store.DecisionDeny, " not before the backup ")
		submittedAtOnce(t, sub)
		got := settledText(t, env, id, sub.callID)
		if want := map[string]any{"approved": false, "feedback": "not before the backup", "decided_by": memberAuthor}; !reflect.DeepEqual(got, want) {
			t.Errorf("result %v, want %v", got, want)
		}
	})

	t.Run("ACommentRequestsChanges", func(t *testing.T) {
		id, sub, p := ask(t, "$comment", map[string]any{"details": "rename the service"})
		for name, d := range map[string]interaction.PromptDecision{
			"WithoutText":     {Action: store.DecisionComment, Text: "   "},
			"OfAnotherKind":   {Action: store.DecisionAllowOnce},
			"Unknown":         {Action: "maybe"},
			"WithTooMuchText": {Action: store.DecisionComment, Text: strings.Repeat("x", store.MaxPromptText+1)},
		} {
			if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, p.ID, adminOp, d); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		decide(t, env, p.ID, memberOp, store.DecisionComment, "call it billing-api instead")
		submittedAtOnce(t, sub)
		got := settledText(t, env, id, sub.callID)
		if want := map[string]any{"approved": false, "feedback": "call it billing-api instead", "decided_by": memberAuthor}; !reflect.DeepEqual(got, want) {
			t.Errorf("result %v, want %v", got, want)
		}
	})

	t.Run("ClosingTheResponseClosesThePrompt", func(t *testing.T) {
		id, sub, p := ask(t, "$closed", map[string]any{"details": "wait for me"})
		if _, err := env.Runtime.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: id}); err != nil {
			t.Fatal(err)
		}
		sub.result(t)
		ended := waitPromptStatus(t, env, p.ID, store.PromptExpired)
		if ended.Feedback != "The response ended before anyone decided." || ended.DecidedBy != "" {
			t.Errorf("closed prompt %+v", ended)
		}
		if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, p.ID, adminOp, interaction.PromptDecision{Action: store.DecisionApprove}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("approving after the response closed: %v, want ErrConflict", err)
		}
		if kinds := events.kindsUntil(t, p.ID, "prompt.expired"); !reflect.DeepEqual(kinds, []string{"prompt.created", "prompt.expired"}) {
			t.Errorf("live feed %v", kinds)
		}
	})

	t.Run("AnUnknownPromptIsNotFound", func(t *testing.T) {
		if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, 1_000_000, adminOp, interaction.PromptDecision{Action: store.DecisionApprove}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("decide an unknown prompt: %v, want ErrNotFound", err)
		}
		if _, err := env.Primary.Internals().Interaction.Prompts.Prompt(ctx, 1_000_000); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("read an unknown prompt: %v, want ErrNotFound", err)
		}
	})

	t.Run("InvalidInputIsRefusedNamingTheRule", func(t *testing.T) {
		id := openAs(t, env, stranger, "$invalid")
		for _, c := range []struct {
			args     map[string]any
			fragment string
		}{
			{map[string]any{"details": " \n "}, "details is empty"},
			{map[string]any{"details": strings.Repeat("é", store.MaxPromptDetails+1)}, "at most 8000"},
			{map[string]any{"details": "x", "title": strings.Repeat("t", store.MaxPromptTitle+1)}, "title is 201 characters"},
			{map[string]any{"details": "x", "approve_label": strings.Repeat("a", 61)}, "approve_label is 61 characters"},
			{map[string]any{"details": "x", "deny_label": strings.Repeat("d", 61)}, "deny_label is 61 characters"},
		} {
			refused(t, callWithArgsFile(t, env, id, "interaction.request_approval", c.args), c.fragment)
		}
		refused(t, callTool(t, env, id, "interaction.request_approval", `{}`), "Invalid tool arguments")
		refused(t, callTool(t, env, id, "interaction.request_approval", `{"details":"x","extra":1}`), "Invalid tool arguments")
		if n := len(promptsIn(t, env, "$invalid")); n != 0 {
			t.Errorf("refused requests posted %d prompts", n)
		}
	})
}

// TestPromptsEndAtTheirBound lets requests go unanswered past PromptWait: approval is not
// given, permission is denied, and the prompts are closed for good.
func TestPromptsEndAtTheirBound(t *testing.T) {
	const bound = time.Second
	env := start(t, testenv.WithConfig(func(c *primary.Config) { c.Interaction.PromptWait = bound }))
	ctx := context.Background()
	events := watchPrompts(t, env)
	id := openAs(t, env, stranger, "$unanswered")

	t.Run("AnUnansweredApprovalIsNotApproved", func(t *testing.T) {
		begun := time.Now()
		r := callTool(t, env, id, "interaction.request_approval", `{"details":"ship it"}`)
		if took := time.Since(begun); took < bound {
			t.Errorf("the call ended after %v, before its bound %v", took, bound)
		}
		got := jsonText(t, r)
		if want := map[string]any{"approved": false, "feedback": "Nobody decided within 1 second.", "decided_by": ""}; !reflect.DeepEqual(got, want) {
			t.Errorf("result %v, want %v", got, want)
		}
		ps := promptsIn(t, env, "$unanswered")
		if len(ps) != 1 || ps[0].Status != store.PromptExpired || ps[0].Feedback != "Nobody decided within 1 second." ||
			ps[0].DecidedBy != "" || ps[0].Decision != "" || ps[0].DecidedAt.IsZero() {
			t.Fatalf("prompts %+v, want one expired", ps)
		}
		if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, ps[0].ID, adminOp, interaction.PromptDecision{Action: store.DecisionApprove}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("approving after the bound: %v, want ErrConflict", err)
		}
		if read, _ := env.Primary.Internals().Interaction.Prompts.Prompt(ctx, ps[0].ID); read.Status != store.PromptExpired {
			t.Errorf("after a late approve the prompt is %s", read.Status)
		}
		if kinds := events.kindsUntil(t, ps[0].ID, "prompt.expired"); !reflect.DeepEqual(kinds, []string{"prompt.created", "prompt.expired"}) {
			t.Errorf("live feed %v", kinds)
		}
		audit, err := env.Primary.Internals().Store.ListAudit(ctx, store.AuditFilter{Subject: store.PromptSubject(ps[0].ID)})
		if err != nil || len(audit) != 1 || audit[0].Action != store.ActionPromptExpire || audit[0].Actor != "primary" {
			t.Errorf("audit %+v (%v), want one expiry by the primary", audit, err)
		}
	})

	t.Run("AnUnansweredPermissionIsDenied", func(t *testing.T) {
		r := callTool(t, env, id, "interaction.permission_prompt", `{"tool_name":"Bash","input":{"cmd":"ls"}}`)
		got := jsonText(t, r)
		want := map[string]any{"behavior": "deny", "message": "Permission to use Bash was not granted: nobody decided within 1 second."}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("result %v, want %v", got, want)
		}
		ps, err := env.Primary.Internals().Interaction.Prompts.ListPrompts(ctx, store.PromptFilter{Kind: store.PromptPermission, Channel: channel, Thread: "$unanswered"})
		if err != nil || len(ps) != 1 || ps[0].Status != store.PromptExpired {
			t.Fatalf("prompts %+v (%v), want one expired", ps, err)
		}
		if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, ps[0].ID, adminOp, interaction.PromptDecision{Action: store.DecisionAllowOnce}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("allowing after the bound: %v, want ErrConflict", err)
		}
	})
}
