package interaction

import (
	"fmt"
	"sort"
	"strings"
)

// Engine starts a background agent: a Bash command run as a job of the agent's own response.
// The command finds its brief in $MINDROOM_AGENT_TASK and the Agent CLI in its environment;
// what it prints is the agent's report.
type Engine struct {
	Name    string
	Command string
}

// TaskEnv is the variable that holds a background agent's brief.
const TaskEnv = "MINDROOM_AGENT_TASK"

// The built-in Claude and Codex engines reach the response's catalog through one MCP server,
// `mindroom-agent mcp`, started by the engine inside the job: it reads the Agent CLI
// environment the job gets (URL, grant, window), so every MCP call is an Agent CLI call of the
// agent's own response and meets its gates.
const (
	// mcpServerName is the server's name in the engines' MCP configuration.
	mcpServerName = "mindroom"
	// PermissionPromptTool is interaction.permission_prompt as Claude Code names it:
	// mcp__<server>__<tool>, where mindroom-agent mcp gives interaction functions their bare
	// names (see `mindroom-agent mcp --help`, TOOL NAMES).
	PermissionPromptTool = "mcp__" + mcpServerName + "__permission_prompt"
)

// Every background agent runs unattended, so at the auto tier (contract: even an admin's
// agent in an admin conversation): nothing it does is approved in advance, and whatever needs
// a person goes to the conversation's people. The built-in engines say so with their own
// flags, and never with a flag that skips permissions or the sandbox
// (--dangerously-skip-permissions, bypassPermissions, --yolo,
// --dangerously-bypass-approvals-and-sandbox, danger-full-access):
//
//   - claude runs in Claude Code's default permission mode, where every tool use that needs
//     permission is asked for, and --permission-prompt-tool sends each question to
//     permission_prompt, that is, to the people of the conversation. (Claude Code's own "auto"
//     mode would let a classifier approve instead of a person.) --strict-mcp-config keeps
//     MCP servers configured elsewhere on the host out of the agent.
//   - codex has no permission hook: it runs its commands in its workspace-write sandbox with
//     approval_policy never, so a command the sandbox refuses fails instead of asking (codex
//     exec can ask nobody). Its MCP servers get a reduced environment, so env_vars passes the
//     three Agent CLI variables through. default_tools_approval_mode approve lets codex exec
//     call the server's tools at all (it would otherwise cancel every call for want of
//     someone to confirm it); each call is still an Agent CLI call that the primary admits,
//     gates and, where the contract says so, puts to people. tool_timeout_sec lets a call wait
//     as long as a person may take (codex's own default is one minute).
//
// The brief is the prompt argument. Standard input is /dev/null (codex exec would add what it
// reads there to the prompt), and standard error is kept out of the report.
const (
	claudeCommand = `claude -p "$MINDROOM_AGENT_TASK" --output-format text ` +
		`--mcp-config '{"mcpServers":{"` + mcpServerName + `":{"command":"mindroom-agent","args":["mcp"]}}}' --strict-mcp-config ` +
		`--permission-mode default --permission-prompt-tool ` + PermissionPromptTool + ` </dev/null 2>/dev/null`
	codexCommand = `codex exec --skip-git-repo-check --sandbox workspace-write -c 'approval_policy="never"' ` +
		`-c 'mcp_servers.` + mcpServerName + `.command="mindroom-agent"' -c 'mcp_servers.` + mcpServerName + `.args=["mcp"]' ` +
		`-c 'mcp_servers.` + mcpServerName + `.env_vars=["MINDROOM_AGENT_CLI_URL","MINDROOM_AGENT_CLI_TOKEN","MINDROOM_AGENT_CLI_WINDOW"]' ` +
		`-c 'mcp_servers.` + mcpServerName + `.default_tools_approval_mode="approve"' -c 'mcp_servers.` + mcpServerName + `.tool_timeout_sec=3600' ` +
		`"$MINDROOM_AGENT_TASK" </dev/null 2>/dev/null`
)

// builtinEngines are the engines known by name. The test engine is deterministic: it reads
// its brief line by line and acts only on lines that start with a directive —
// "say <text>" prints text, "call <tool> <json>" calls a tool through the Agent CLI,
// "sleep <seconds>" waits, "fail <code>" exits with code — so tests and demos can drive it.
var builtinEngines = map[string]string{
	"claude": claudeCommand,
	"codex":  codexCommand,
	"test": `while IFS= read -r line; do
  case $line in
    "say "*) printf '%s\n' "${line#say }" ;;
    "call "*) rest=${line#call }; mindroom-agent tools call "${rest%% *}" "${rest#* }" || exit ;;
    "sleep "*) sleep "${line#sleep }" ;;
    "fail "*) exit "${line#fail }" ;;
  esac
done <<<"$MINDROOM_AGENT_TASK"`,
}

// EngineNames lists the built-in engines.
func EngineNames() []string {
	names := make([]string, 0, len(builtinEngines))
	for n := range builtinEngines {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseEngine returns the engine a flag names: a built-in name, or "command:<bash command>"
// for a command template of one's own.
func ParseEngine(s string) (Engine, error) {
	if cmd, ok := strings.CutPrefix(s, "command:"); ok {
		if strings.TrimSpace(cmd) == "" {
			return Engine{}, fmt.Errorf("engine command is empty")
		}
		return Engine{Name: "command", Command: cmd}, nil
	}
	cmd, ok := builtinEngines[s]
	if !ok {
		return Engine{}, fmt.Errorf("unknown engine %q: use one of %s, or command:<bash command>", s, strings.Join(EngineNames(), ", "))
	}
	return Engine{Name: s, Command: cmd}, nil
}

// brief is what a background agent is told: the task, and how it works.
func brief(task string) string {
	return "You are a background agent working alone on a task handed over from a conversation. " +
		"Nobody will answer questions while you work. Your final message is your report to that " +
		"conversation: make it complete and self-contained.\n\nTask:\n" + task
}
