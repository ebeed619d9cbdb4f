package interaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// secretValue is the secret in the tool input of these tests: the caller gets it back on
// allow; people, the store, the live feed and the logs never see it.
const secretValue = "s3cr3t-value"

// bashInput is a permission request of Claude Code's shape with a secret in it.
func bashInput() map[string]any {
	return map[string]any{"env": map[string]any{"API_TOKEN": secretValue}, "cmd": "ls"}
}

// TestPermissionPrompt routes permission requests from real Bash to operators and checks
// what each decision answers, what is remembered, and that the secret stays with the caller.
func TestPermissionPrompt(t *testing.T) {
	logs := &logBuffer{}
	env := start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}))
	ctx := context.Background()
	events := watchPrompts(t, env)

	// ask submits permission_prompt with --timeout 0 and returns the prompt people see.
	ask := func(t *testing.T, id string, args map[string]any) (submitted, store.Prompt) {
		t.Helper()
		sub := submit(t, env, id, "interaction.permission_prompt", args)
		p := waitPrompt(t, env, sub.callID)
		if p.Status != store.PromptPending || p.Kind != store.PromptPermission {
			t.Errorf("posted %+v", p)
		}
		waitStatus(t, env, id, sub.callID, "waiting")
		return sub, p
	}
	answer := func(t *testing.T, id string, sub submitted) map[string]any {
		t.Helper()
		if r := sub.result(t); r.code != 3 {
			t.Errorf("tools call --timeout 0: %s, want exit 3", r)
		}
		return settledText(t, env, id, sub.callID)
	}
	allowsOriginal := func(t *testing.T, got map[string]any, original map[string]any) {
		t.Helper()
		want := map[string]any{"behavior": "allow", "updatedInput": original}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("result %v, want %v", got, want)
		}
	}

	t.Run("AllowOnceReturnsTheOriginalInputWhilePeopleSeeItMasked", func(t *testing.T) {
		id := openAs(t, env, stranger, "$once")
		sub, p := ask(t, id, map[string]any{"tool_name": "Bash", "input": bashInput(), "tool_use_id": "toolu_01", "unknown": "dropped"})
		if p.ToolName != "Bash" || p.ToolUseID != "toolu_01" || string(p.MaskedInput) != `{"cmd":"ls","env":{"API_TOKEN":"(redacted)"}}` {
			t.Errorf("people see tool %q, use %q, input %s", p.ToolName, p.ToolUseID, p.MaskedInput)
		}
		decide(t, env, p.ID, memberOp, store.DecisionAllowOnce, "")
		allowsOriginal(t, answer(t, id, sub), bashInput())
		// Once means once: the same tool asks again.
		sub2, p2 := ask(t, id, map[string]any{"tool_name": "Bash", "input": bashInput()})
		decide(t, env, p2.ID, memberOp, store.DecisionDeny, "")
		if got := answer(t, id, sub2); !reflect.DeepEqual(got, map[string]any{"behavior": "deny", "message": "mia denied permission to use Bash."}) {
			t.Errorf("deny without a reason: %v", got)
		}
	})

	t.Run("ToolInputIsUsedWhenInputIsAbsent", func(t *testing.T) {
		id := openAs(t, env, stranger, "$tool-input")
		original := map[string]any{"path": "notes.txt", "Password": secretValue, "lines": []any{"a", "b"}}
		sub, p := ask(t, id, map[string]any{"tool_name": "Write", "tool_input": original})
		if string(p.MaskedInput) != `{"Password":"(redacted)","lines":["a","b"],"path":"notes.txt"}` {
			t.Errorf("people see %s", p.MaskedInput)
		}
		decide(t, env, p.ID, adminOp, store.DecisionAllowOnce, "")
		allowsOriginal(t, answer(t, id, sub), original)
	})

	t.Run("NullInputCountsAsAbsent", func(t *testing.T) {
		original := map[string]any{"path": "notes.txt", "Password": secretValue}
		for _, tc := range []struct {
			name      string
			args      map[string]any
			want      map[string]any
			peopleSee string
		}{
			{"SoToolInputIsUsed", map[string]any{"tool_name": "Write", "input": nil, "tool_input": original},
				original, `{"Password":"(redacted)","path":"notes.txt"}`},
			{"SoNullsAloneAreAnEmptyObject", map[string]any{"tool_name": "Write", "input": nil, "tool_input": nil},
				map[string]any{}, `{}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				id := openAs(t, env, stranger, "$null-input-"+tc.name)
				feed, stop := env.Primary.Internals().Events.Subscribe(0)
				defer stop()
				sub := submit(t, env, id, "interaction.permission_prompt", tc.args)
				p := promptPosted(t, env, feed, sub.callID)
				if string(p.MaskedInput) != tc.peopleSee {
					t.Errorf("people see %s, want %s", p.MaskedInput, tc.peopleSee)
				}
				decide(t, env, p.ID, memberOp, store.DecisionAllowOnce, "")
				allowsOriginal(t, settledText(t, env, id, sub.callID), tc.want)
				if r := sub.result(t); r.code != 3 {
					t.Errorf("tools call --timeout 0: %s, want exit 3", r)
				}
			})
		}
	})

	t.Run("NoInputAtAllIsAnEmptyObjectForAnyTool", func(t *testing.T) {
		id := openAs(t, env, stranger, "$no-input")
		sub, p := ask(t, id, map[string]any{})
		if p.ToolName != interaction.DefaultToolName || string(p.MaskedInput) != `{}` {
			t.Errorf("people see tool %q with input %s", p.ToolName, p.MaskedInput)
		}
		decide(t, env, p.ID, adminOp, store.DecisionAllowOnce, "")
		allowsOriginal(t, answer(t, id, sub), map[string]any{})
	})

	t.Run("DenyAnswersWithTheReason", func(t *testing.T) {
		id := openAs(t, env, stranger, "$deny")
		sub, p := ask(t, id, map[string]any{"tool_name": "Bash", "input": bashInput()})
		if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, p.ID, adminOp, interaction.PromptDecision{Action: store.DecisionApprove}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("approve on a permission prompt: %v, want ErrInvalid", err)
		}
		decide(t, env, p.ID, adminOp, store.DecisionDeny, "use the read-only tool")
		if got := answer(t, id, sub); !reflect.DeepEqual(got, map[string]any{"behavior": "deny", "message": "use the read-only tool"}) {
			t.Errorf("result %v", got)
		}
	})

	t.Run("AllowThreadAllowsTheToolAgainWithoutAsking", func(t *testing.T) {
		const thread = "$allow-thread"
		id := openAs(t, env, stranger, thread)
		sub, p := ask(t, id, map[string]any{"tool_name": "Bash", "input": bashInput()})
		decide(t, env, p.ID, memberOp, store.DecisionAllowThread, "")
		allowsOriginal(t, answer(t, id, sub), bashInput())

		// A later request in the same thread, even from another response, is answered at once.
		id2 := openAs(t, env, stranger, thread)
		again := map[string]any{"env": map[string]any{"API_TOKEN": secretValue}, "cmd": "ls -la"}
		allowsOriginal(t, jsonText(t, callWithArgsFile(t, env, id2, "interaction.permission_prompt",
			map[string]any{"tool_name": "Bash", "input": again})), again)
		if n := len(promptsIn(t, env, thread)); n != 1 {
			t.Errorf("%d prompts in the thread, want only the first", n)
		}
		audit, err := env.Primary.Internals().Store.ListAudit(ctx, store.AuditFilter{Action: store.ActionPermissionAutoAllow, Subject: store.ConversationSubject(channel, thread)})
		if err != nil || len(audit) != 1 || !strings.Contains(string(audit[0].Detail), `"scope":"thread"`) {
			t.Errorf("auto-allow audit %+v (%v), want one entry", audit, err)
		}

		// Another tool in the thread, and the same tool in another thread, still ask.
		sub3, p3 := ask(t, id2, map[string]any{"tool_name": "Edit", "input": map[string]any{"path": "a"}})
		decide(t, env, p3.ID, memberOp, store.DecisionDeny, "no edits")
		if got := answer(t, id2, sub3); got["behavior"] != "deny" {
			t.Errorf("another tool: %v", got)
		}
		other := openAs(t, env, stranger, "$elsewhere")
		sub4, p4 := ask(t, other, map[string]any{"tool_name": "Bash", "input": bashInput()})
		decide(t, env, p4.ID, memberOp, store.DecisionDeny, "")
		if got := answer(t, other, sub4); got["behavior"] != "deny" {
			t.Errorf("another thread: %v", got)
		}
	})

	t.Run("ANamelessRequestNeverUsesAnAllowance", func(t *testing.T) {
		// An allowance for the default name "a tool" would cover every request that names no
		// tool, whatever it runs: such requests always ask.
		const thread = "$nameless"
		id := openAs(t, env, stranger, thread)
		sub, p := ask(t, id, map[string]any{"input": map[string]any{"cmd": "ls"}})
		decide(t, env, p.ID, adminOp, store.DecisionAllowConversation, "")
		allowsOriginal(t, answer(t, id, sub), map[string]any{"cmd": "ls"})
		sub2, p2 := ask(t, id, map[string]any{"input": map[string]any{"cmd": "rm -rf /"}})
		decide(t, env, p2.ID, memberOp, store.DecisionDeny, "no")
		if got := answer(t, id, sub2); got["behavior"] != "deny" {
			t.Errorf("a second nameless request: %v, want it asked and denied", got)
		}
	})

	t.Run("AnInputTooLargeToReturnIsDeniedWithoutAsking", func(t *testing.T) {
		const thread = "$oversize"
		id := openAs(t, env, stranger, thread)
		got := jsonText(t, callWithArgsFile(t, env, id, "interaction.permission_prompt",
			map[string]any{"tool_name": "Write", "input": map[string]any{"content": strings.Repeat("x", 20_000)}}))
		if got["behavior"] != "deny" || !strings.Contains(fmt.Sprint(got["message"]), "too large") {
			t.Errorf("oversize input: %v", got)
		}
		if n := len(promptsIn(t, env, thread)); n != 0 {
			t.Errorf("%d prompts posted for an input that cannot be returned", n)
		}
	})

	t.Run("AWrongTypedFieldIsDeniedWithoutAsking", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args map[string]any
			want string
		}{
			{"ToolNameNumber", map[string]any{"tool_name": 5}, "tool_name"},
			{"ToolNameBool", map[string]any{"tool_name": true, "input": bashInput()}, "tool_name"},
			{"ToolNameList", map[string]any{"tool_name": []any{"Bash"}}, "tool_name"},
			{"ToolNameObject", map[string]any{"tool_name": map[string]any{"name": "Bash"}}, "tool_name"},
			{"ToolUseIDNumber", map[string]any{"tool_name": "Bash", "tool_use_id": 7}, "tool_use_id"},
			{"ToolUseIDObject", map[string]any{"tool_name": "Bash", "tool_use_id": map[string]any{}}, "tool_use_id"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				thread := "$wrong-type-" + tc.name
				id := openAs(t, env, stranger, thread)
				got := jsonText(t, callWithArgsFile(t, env, id, "interaction.permission_prompt", tc.args))
				want := map[string]any{"behavior": "deny",
					"message": "The request's " + tc.want + " is not a string, so permission was not asked for."}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("result %v, want %v", got, want)
				}
				if n := len(promptsIn(t, env, thread)); n != 0 {
					t.Errorf("%d prompts posted for a request with a wrong-typed %s", n, tc.want)
				}
			})
		}
	})

	t.Run("ANullOrBlankToolNameAsksAboutAnyTool", func(t *testing.T) {
		for name, args := range map[string]map[string]any{
			"Null":  {"tool_name": nil, "tool_use_id": nil},
			"Blank": {"tool_name": "  ", "tool_use_id": ""},
		} {
			t.Run(name, func(t *testing.T) {
				id := openAs(t, env, stranger, "$blank-name-"+name)
				sub, p := ask(t, id, args)
				if p.ToolName != interaction.DefaultToolName || p.ToolUseID != "" {
					t.Errorf("people see tool %q, use %q", p.ToolName, p.ToolUseID)
				}
				decide(t, env, p.ID, memberOp, store.DecisionAllowOnce, "")
				allowsOriginal(t, answer(t, id, sub), map[string]any{})
			})
		}
	})

	t.Run("AllowConversationIsForAdminsOnly", func(t *testing.T) {
		const thread = "$allow-conversation"
		id := openAs(t, env, stranger, thread)
		sub, p := ask(t, id, map[string]any{"tool_name": "Read", "input": map[string]any{"path": "README.md"}})
		if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(ctx, p.ID, memberOp, interaction.PromptDecision{Action: store.DecisionAllowConversation}); !errors.Is(err, store.ErrForbidden) {
			t.Fatalf("a member's allow_conversation: %v, want ErrForbidden", err)
		}
		if read, _ := env.Primary.Internals().Interaction.Prompts.Prompt(ctx, p.ID); read.Status != store.PromptPending {
			t.Fatalf("after a forbidden decision the prompt is %s", read.Status)
		}
		decide(t, env, p.ID, adminOp, store.DecisionAllowConversation, "")
		allowsOriginal(t, answer(t, id, sub), map[string]any{"path": "README.md"})
		allowsOriginal(t, jsonText(t, callWithArgsFile(t, env, id, "interaction.permission_prompt",
			map[string]any{"tool_name": "Read", "input": map[string]any{"path": "go.mod"}})), map[string]any{"path": "go.mod"})
		if n := len(promptsIn(t, env, thread)); n != 1 {
			t.Errorf("%d prompts in the thread, want only the first", n)
		}
	})

	t.Run("TheSecretIsNeverStoredPublishedOrLogged", func(t *testing.T) {
		id := openAs(t, env, stranger, "$secret")
		sub, p := ask(t, id, map[string]any{"tool_name": "Bash", "input": bashInput()})
		decide(t, env, p.ID, adminOp, store.DecisionAllowOnce, "")
		allowsOriginal(t, answer(t, id, sub), bashInput())
		// Every request of this test so far held the secret; none may have leaked it.
		if !strings.Contains(logs.String(), "(redacted)") {
			t.Errorf("the logs do not show the masked input:\n%s", logs.String())
		}
		if strings.Contains(logs.String(), secretValue) {
			t.Errorf("the logs show the secret:\n%s", logs.String())
		}
		if all := events.all(t); strings.Contains(all, secretValue) || !strings.Contains(all, "(redacted)") {
			t.Errorf("the live feed shows the secret or no masked input: %s", all)
		}
		ps, err := env.Primary.Internals().Interaction.Prompts.ListPrompts(ctx, store.PromptFilter{Kind: store.PromptPermission, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(ps)
		if strings.Contains(string(b), secretValue) {
			t.Errorf("listed prompts show the secret: %s", b)
		}
		audit, err := env.Primary.Internals().Store.ListAudit(ctx, store.AuditFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(audit); strings.Contains(string(b), secretValue) {
			t.Errorf("the audit log shows the secret: %s", b)
		}
		// Nothing the store wrote holds it: the database, its WAL and anything beside them.
		files, _ := filepath.Glob(filepath.Join(env.StateDir, "turncli.db*"))
		if len(files) == 0 {
			t.Fatal("no database files")
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), secretValue) {
				t.Errorf("%s holds the secret", filepath.Base(f))
			}
		}
	})
}
