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

// builtinEngines are the engines known by name. The test engine is deterministic: it reads
// its brief line by line and acts only on lines that start with a directive —
// "say <text>" prints text, "call <tool> <json>" calls a tool through the Agent CLI,
// "sleep <seconds>" waits, "fail <code>" exits with code — so tests and demos can drive it.
var builtinEngines = map[string]string{
	"claude": `claude -p "$MINDROOM_AGENT_TASK" --output-format text ` +
		`--mcp-config '{"mcpServers":{"mindroom":{"command":"mindroom-agent","args":["mcp"]}}}' 2>/dev/null`,
	"codex": `codex exec --skip-git-repo-check "$MINDROOM_AGENT_TASK" 2>/dev/null`,
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
