package claude

import "strings"

// mcpToolPrefix starts the names of the tools of turncli's MCP server.
const mcpToolPrefix = "mcp__" + mcpServerName + "__"

// readOnlyTools are the CLI's built-in tools that only read the working directory or the
// run's own state. The hook leaves them to the permission mode, which allows them without
// asking; a tool not listed here goes to people, so a tool added by a newer CLI is asked for
// until it is known to be harmless.
var readOnlyTools = map[string]bool{
	"Read": true, "Glob": true, "Grep": true, "LS": true, "NotebookRead": true,
	"TodoRead": true, "TodoWrite": true, "ToolSearch": true, "ListAgents": true,
	"TaskList": true, "TaskGet": true, "TaskOutput": true,
}

// permission says what the hook does with a tool use before asking anyone.
type permission int

const (
	// askPeople: the tool use needs people's decision.
	askPeople permission = iota
	// allowed: it is a call of the response's own tools, gated by the primary.
	allowed
	// leftToMode: the permission mode decides (it allows what only reads).
	leftToMode
)

// permissionOf classifies a tool by its name.
func permissionOf(tool string) permission {
	switch {
	case strings.HasPrefix(tool, mcpToolPrefix) && len(tool) > len(mcpToolPrefix):
		return allowed
	case readOnlyTools[tool]:
		return leftToMode
	}
	return askPeople
}
