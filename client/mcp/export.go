package mcp

import "time"

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

// The Tasks extension of MCP 2026-07-28 as tasks.go serves it, for another server of the same
// tasks: a task is a call's receipt, its id the call id (a version 7 UUID, whose time is the
// task's creation).
const (
	// TasksExtension names the extension in capabilities.
	TasksExtension = tasksExtension
	// CodeMissingCapability is the error of a task method whose request does not declare the
	// extension.
	CodeMissingCapability = codeMissingCapability
	// TaskNotFound is the message (with code -32602) of a task id that is no call of the
	// caller's.
	TaskNotFound = taskNotFound
	// TaskWait is the longest a tasks/get waits for a call to settle before answering.
	TaskWait = taskWait
)

// DeclaresTasks reports whether the _meta of a request of MCP 2026-07-28 declares the
// extension in its client capabilities.
func DeclaresTasks(meta map[string]any) bool { return metaDeclaresTasks(meta) }

// MissingTasks is the message and data of the CodeMissingCapability error of a task method
// whose request does not declare the extension.
func MissingTasks(method string) (message string, data map[string]any) {
	e := missingTasks(method)
	return e.message, e.data
}

// Task is the task (MCP 2026-07-28) of the receipt of callID, whose status is status and
// has been since updated. It holds no resultType and, once terminal, no result: the caller
// adds "resultType" and the "result" that tools/call would have answered.
func Task(callID, status string, updated time.Time) map[string]any {
	return taskOf(callID, status, statelessVersion, updated)
}
