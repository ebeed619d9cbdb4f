package mcp

// This file is the one home of a tool's annotations (MCP 2025-03-26 and later): the hints
// clients read to decide whether a call may run without asking someone first (Codex, for
// one, declines or cancels an unattended call of a tool that is not readOnlyHint).
//
// A hint may claim only what the function's traits say. The catalog gives a function four
// traits: needs_confirmation (a person approves each call), user_input (the call waits for a
// person), external_execution (the call starts work that outlives the command) and ends_turn
// (the agent should end its turn after it). tools.describe does not return them, and none of
// them would allow a hint that claims less risk anyway:
//
//	hint             value             claims less only if a trait said, and none does
//	readOnlyHint     false             the function changes nothing
//	destructiveHint  true              the function only adds
//	idempotentHint   false             a repeated call has no further effect (external_execution
//	                                   and ends_turn say the opposite)
//	openWorldHint    true              the function stays in a closed world (user_input and
//	                                   external_execution say the opposite)
//	title            TOOLKIT.FUNCTION
//
// So every tool gets the same hints, each written out rather than left to the revision's
// defaults, so that no client reads an absent hint more kindly than it should. The help of
// `mindroom-agent mcp` shows this table (TOOL ANNOTATIONS); a test keeps the two in step.

// annotationsSince is the first revision with tool annotations.
const annotationsSince = "2025-03-26"

// toolAnnotations are the annotations of the tool of ref (see the table above).
func toolAnnotations(ref toolRef) map[string]any {
	return map[string]any{
		"title":           ref.String(),
		"readOnlyHint":    false,
		"destructiveHint": true,
		"idempotentHint":  false,
		"openWorldHint":   true,
	}
}
