package claude

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

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

// permissionOf classifies a tool use. A read-only tool reading outside the working
// directory goes to people: the permission mode would ask about it, and with nobody to ask
// in a headless run, deny it.
func permissionOf(tool string, input json.RawMessage, cwd string) permission {
	switch {
	case strings.HasPrefix(tool, mcpToolPrefix) && len(tool) > len(mcpToolPrefix):
		return allowed
	case readOnlyTools[tool] && !readsOutside(input, cwd):
		return leftToMode
	}
	return askPeople
}

// pathFields are the input fields in which the CLI's read-only tools name what they read.
var pathFields = []string{"file_path", "path", "notebook_path"}

// readsOutside reports whether a tool's input names a path outside dir (relative paths are
// of dir). Without a dir, every path counts as outside.
func readsOutside(input json.RawMessage, dir string) bool {
	var fields map[string]any
	if json.Unmarshal(input, &fields) != nil {
		return false
	}
	for _, key := range pathFields {
		p, _ := fields[key].(string)
		if p == "" {
			continue
		}
		if dir == "" {
			return true
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}
