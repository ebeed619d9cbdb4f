package interaction

import (
	"fmt"

	"github.com/turncli/turncli/client/engines"
	"sort"
	"strings"
)

// Engine starts a background agent: a Bash command run as a job of the agent's own response.
// The command finds its brief in $MINDROOM_AGENT_TASK and the Agent CLI in its environment.
// A driver engine (claude, codex) is `mindroom-agent engine NAME`, which runs the real CLI and
// ends its output with a result line (client/engines): the job takes its report, outcome and
// engine run from that line, and may park on a permission request. Any other engine's whole
// output is its report.
type Engine struct {
	Name    string
	Command string
	// Driver: the command is an engine driver whose result line the job reads.
	Driver bool
}

// TaskEnv is the variable that holds a background agent's brief.
const TaskEnv = engines.TaskEnv

// Every background agent runs unattended, so at the auto tier (contract: even an admin's
// agent in an admin conversation): nothing it does is approved in advance, and whatever needs
// a person goes to the conversation's people. The drivers never pass an engine a flag that
// skips permissions or the sandbox: Claude Code's tool uses that need permission go to
// interaction.permission_prompt through its PreToolUse hook (and park the job when nobody
// decides within the hook's wait), and Codex runs under app-server with an approval policy
// that sends every approval request to the driver, which asks the same people. Each engine
// reaches the response's catalog through `mindroom-agent mcp` and nothing else: no MCP
// server, setting or hook of the host or the repository is read (see client/engines/...).
//
// The test engine is deterministic: it reads its brief line by line and acts only on lines
// that start with a directive — "say <text>" prints text, "call <tool> <json>" calls a tool
// through the Agent CLI, "sleep <seconds>" waits, "fail <code>" exits with code — so tests
// and demos can drive it.
var builtinEngines = map[string]Engine{
	"claude": {Name: "claude", Command: "exec mindroom-agent engine claude </dev/null", Driver: true},
	"codex":  {Name: "codex", Command: "exec mindroom-agent engine codex </dev/null", Driver: true},
	"test": {Name: "test", Command: `while IFS= read -r line; do
  case $line in
    "say "*) printf '%s\n' "${line#say }" ;;
    "call "*) rest=${line#call }; mindroom-agent tools call "${rest%% *}" "${rest#* }" || exit ;;
    "sleep "*) sleep "${line#sleep }" ;;
    "fail "*) exit "${line#fail }" ;;
  esac
done <<<"$MINDROOM_AGENT_TASK"`},
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
	e, ok := builtinEngines[s]
	if !ok {
		return Engine{}, fmt.Errorf("unknown engine %q: use one of %s, or command:<bash command>", s, strings.Join(EngineNames(), ", "))
	}
	return e, nil
}

// brief is what a background agent is told: the task, and how it works.
func brief(task string) string {
	return "You are a background agent working alone on a task handed over from a conversation. " +
		"Nobody will answer questions while you work. Your final message is your report to that " +
		"conversation: make it complete and self-contained.\n\nTask:\n" + task
}
