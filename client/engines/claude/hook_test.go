package claude

import (
	"context"
	"strings"
	"testing"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/client/engines"
)

// TestHookAnswersWithoutAskingAnyone covers the answers the hook gives from its input and
// environment alone. The environment has no Agent CLI, so a tool use that needs people is
// denied saying nobody could be asked.
func TestHookAnswersWithoutAskingAnyone(t *testing.T) {
	resumed := map[string]string{
		engines.ResumeEnv:   "3f2b1c4e-1111-4222-8333-944455556666",
		engines.DecisionEnv: `{"tool_use_id":"toolu_1","behavior":"deny","message":"not today"}`,
	}
	for _, tc := range []struct {
		name, input string
		env         map[string]string
		want        string
	}{
		{"AToolOfTheResponseIsAllowed",
			`{"hook_event_name":"PreToolUse","tool_name":"mcp__mindroom__test__echo","tool_input":{},"tool_use_id":"toolu_1","cwd":"/ws"}`, nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"A tool of the response: the primary gates each call."}}`},
		{"AReadInTheWorkingDirectoryIsLeftToTheMode",
			`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/ws/a"},"tool_use_id":"toolu_1","cwd":"/ws"}`, nil, ``},
		{"AnotherEventIsLeftAlone",
			`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_use_id":"toolu_1","cwd":"/ws"}`, nil, ``},
		{"TheResumedRunsDecisionAnswersItsToolUse",
			`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1","cwd":"/ws"}`, resumed,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not today"}}`},
		{"AnotherToolUseOfAResumedRunIsAsked",
			`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_2","cwd":"/ws"}`, resumed,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Permission was not granted: nobody could be asked (`},
		{"UnreadableInputIsDenied", `{"tool_name":`, nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Permission was not granted: the hook could not read the tool use (unexpected end of JSON input)."}}`},
		{"ABadWaitIsDenied",
			`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{},"tool_use_id":"toolu_1","cwd":"/ws"}`, map[string]string{engines.HookWaitEnv: "soon"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Permission was not granted: MINDROOM_AGENT_HOOK_WAIT must be a positive Go duration such as 50s, got \"soon\"."}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			var out, errOut strings.Builder
			code := Hook(context.Background(), client.NewAgent(client.AgentConfig{Getenv: getenv}), nil, strings.NewReader(tc.input), &out, &errOut, getenv)
			got := strings.TrimSuffix(out.String(), "\n")
			if code != 0 || !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") || errOut.Len() != 0 {
				t.Errorf("exit %d, answer %s, stderr %q; want exit 0 and %s", code, got, errOut.String(), tc.want)
			}
		})
	}
}
