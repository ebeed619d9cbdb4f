package codex

import (
	"encoding/json"
	"fmt"
)

// An approval request of the app-server becomes one permission prompt: the tool people see
// (Bash for a command, Edit for a file change, the request's own method otherwise), what the
// engine wants to do, and the id of its item; and the answer to send once they decided.

// approval is one approval request, ready to be put to people.
type approval struct {
	tool      string
	input     map[string]any
	toolUseID string
	// answer is the result the server gets for the verdict.
	answer func(verdict) any
}

// approvalOf reads an approval request. ok is false for a request that is not one.
// fileChanges gives the changes of a file change item, which its request does not repeat.
func approvalOf(m message, fileChanges func(itemID string) any) (a approval, ok bool, err error) {
	var p map[string]any
	if len(m.Params) > 0 {
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return approval{}, true, fmt.Errorf("reading %s: %w", m.Method, err)
		}
	}
	str := func(k string) string { s, _ := p[k].(string); return s }
	input := func(keys ...string) map[string]any {
		in := map[string]any{}
		for i := 0; i+1 < len(keys); i += 2 {
			if v, present := p[keys[i+1]]; present && v != nil && v != "" {
				in[keys[i]] = v
			}
		}
		return in
	}
	accept := func(v verdict) any {
		if v.allow {
			return map[string]any{"decision": "accept"}
		}
		return map[string]any{"decision": "decline"}
	}
	switch m.Method {
	case "item/commandExecution/requestApproval":
		in := input("command", "command", "cwd", "cwd", "reason", "reason", "network", "networkApprovalContext")
		return approval{tool: "Bash", input: in, toolUseID: str("itemId"), answer: accept}, true, nil
	case "item/fileChange/requestApproval":
		in := input("reason", "reason", "grant_root", "grantRoot")
		if changes := fileChanges(str("itemId")); changes != nil {
			in["changes"] = changes
		}
		return approval{tool: "Edit", input: in, toolUseID: str("itemId"), answer: accept}, true, nil
	case "item/permissions/requestApproval":
		in := input("cwd", "cwd", "reason", "reason", "permissions", "permissions")
		answer := func(v verdict) any {
			granted := map[string]any{}
			if v.allow {
				if asked, isObject := p["permissions"].(map[string]any); isObject {
					for k, val := range asked {
						if val != nil {
							granted[k] = val
						}
					}
				}
			}
			return map[string]any{"permissions": granted, "scope": "turn"}
		}
		return approval{tool: m.Method, input: in, toolUseID: str("itemId"), answer: answer}, true, nil
	case "mcpServer/elicitation/request":
		in := input("server", "serverName", "mode", "mode", "message", "message", "url", "url")
		answer := func(v verdict) any {
			if v.allow {
				return map[string]any{"action": "accept", "content": map[string]any{}, "_meta": nil}
			}
			return map[string]any{"action": "decline", "content": nil, "_meta": nil}
		}
		id := str("elicitationId")
		if id == "" {
			id = string(m.ID)
		}
		return approval{tool: m.Method, input: in, toolUseID: id, answer: answer}, true, nil
	case "execCommandApproval", "applyPatchApproval": // the protocol's first version
		tool, in := "Bash", input("command", "command", "cwd", "cwd", "reason", "reason")
		if m.Method == "applyPatchApproval" {
			tool, in = "Edit", input("changes", "fileChanges", "reason", "reason", "grant_root", "grantRoot")
		}
		answer := func(v verdict) any {
			if v.allow {
				return map[string]any{"decision": "approved"}
			}
			return map[string]any{"decision": map[string]any{"denied": map[string]any{"rejection": v.why}}}
		}
		return approval{tool: tool, input: in, toolUseID: str("callId"), answer: answer}, true, nil
	}
	return approval{}, false, nil
}

// otherAnswer is the answer to a request that is not an approval, and an error message when
// the driver cannot serve it.
func otherAnswer(m message) (result any, errMsg string) {
	if m.Method == "item/tool/requestUserInput" {
		// Nobody answers questions while a background agent works: no answers.
		return map[string]any{"answers": map[string]any{}}, ""
	}
	return nil, "mindroom-agent engine codex does not serve " + m.Method
}
