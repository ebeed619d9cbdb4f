package mcp

// This file exports what another MCP server of a response's catalog needs to name and answer
// its tools exactly as `mindroom-agent mcp` does: the primary's gateway MCP endpoint. The rules
// stay in their homes (names.go, annotations.go, tools.go); these are doors to them.

const (
	// MetaCallID and MetaStatus are the _meta keys of a tools/call result: the call's id and
	// its receipt's status.
	MetaCallID = metaCallID
	MetaStatus = metaStatus
)

// Names maps MCP tool names to catalog functions and back (see names.go). The zero value is
// ready and safe for concurrent use. A hashed name is resolved only after Name gave it.
type Names struct{ n toolNames }

// Name is the MCP name of toolkit.function.
func (n *Names) Name(toolkit, function string) string {
	return n.n.name(toolRef{toolkit: toolkit, function: function})
}

// Lookup returns the function an MCP name stands for; ok is false for a name that is neither
// natural nor bare nor a hashed name this Names gave.
func (n *Names) Lookup(name string) (toolkit, function string, ok bool) {
	ref, ok := n.n.lookup(name)
	return ref.toolkit, ref.function, ok
}

// Annotations are the tool annotations of toolkit.function (see annotations.go), from MCP
// revision AnnotationsSince on.
func Annotations(toolkit, function string) map[string]any {
	return toolAnnotations(toolRef{toolkit: toolkit, function: function})
}

// AnnotationsSince is the first MCP revision with tool annotations.
const AnnotationsSince = annotationsSince

// OutcomeText is the text content a model reads of a terminal receipt's outcome (a value as
// internal/canonjson parses it) and status.
func OutcomeText(outcome any, status string) string { return outcomeText(outcome, status) }
