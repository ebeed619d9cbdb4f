package interaction

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// DefaultToolName names the tool of a permission request that names none.
const DefaultToolName = "a tool"

func permissionPromptFunction() catalog.Function {
	return catalog.Function{
		Name: "permission_prompt",
		Description: "Ask the people of this conversation whether a tool may run with the given input, and wait for their answer, " +
			"at most about " + plainDuration(DefaultPromptWait) + ". Meant as an engine's permission-prompt hook (such as Claude Code's --permission-prompt-tool). " +
			`Returns a JSON text {"behavior":"allow","updatedInput":<the input>} or {"behavior":"deny","message":"<reason>"}; ` +
			"no answer in time is a denial. People see the input with secret values masked.",
		// Every key is optional and unknown keys are dropped, not refused: hooks send more
		// than these.
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"tool_name":{"description":"The tool asking to run, a string (default \"a tool\"); any other type is denied."},` +
			`"input":{"description":"The tool's input, any JSON value; null counts as absent."},` +
			`"tool_input":{"description":"The tool's input, used when input is absent or null."},` +
			`"tool_use_id":{"description":"The engine's id of this tool use, a string; any other type is denied."}},` +
			`"additionalProperties":true}`),
		// The call waits for a person's answer.
		Traits: catalog.Traits{UserInput: true},
	}
}

// permissionRequest is permission_prompt's arguments, unknown keys dropped.
type permissionRequest struct {
	tool      string
	toolUseID string
	// input is the original input: it is returned as it is on allow and never stored or
	// logged.
	input any
	// named: the request named its tool (allowances apply only to named tools).
	named bool
}

func (s *Prompts) permissionPrompt(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	req, why := permissionArgs(call.Arguments)
	if why != "" {
		return deny(why)
	}
	id := call.Identity
	masked, err := canonjson.Marshal(maskSecrets(req.input, s.cfg.Secrets))
	if err != nil {
		return deny("The tool input could not be read, so permission was not granted.")
	}
	ps := s.cfg.Store
	if res, err := allow(req.input); err != nil || oversizeAllow(res) {
		return deny(fmt.Sprintf("The input of %s is too large to pass back once allowed, so permission was not asked for.", req.tool))
	}
	var allowance store.PermissionAllowance
	allowed := false
	if req.named { // an allowance for "a tool" would cover every nameless request
		allowance, allowed, err = ps.UsePermissionAllowance(ctx, store.PermissionUse{
			Channel: id.Channel, Thread: id.Thread, ToolName: req.tool,
			Agent: id.Agent, ResponseID: id.ResponseID, CallID: call.ID, ToolUseID: req.toolUseID,
		})
	}
	if err != nil {
		s.log.Error("permission allow-list unreadable", "call", call.ID, "tool", req.tool, "err", err)
		return deny(fmt.Sprintf("Permission to use %s could not be checked, so it was not granted.", req.tool))
	}
	if allowed {
		s.log.Info("permission allowed by allow-list", "tool", req.tool, "scope", allowance.Scope, "granted_by", allowance.GrantedBy,
			"channel", id.Channel, "thread", id.Thread, "call", call.ID, "input", string(masked))
		return allow(req.input)
	}
	ended := s.postAndWait(ctx, call, store.NewPrompt{
		Kind: store.PromptPermission, Channel: id.Channel, Thread: id.Thread, Requester: id.Requester, Agent: id.Agent,
		ResponseID: id.ResponseID, CallID: call.ID, ToolName: req.tool, ToolUseID: req.toolUseID, MaskedInput: masked,
	})
	switch {
	case ended.Status == store.PromptApproved:
		return allow(req.input)
	case ended.Status == store.PromptExpired:
		return deny(fmt.Sprintf("Permission to use %s was not granted: %s", req.tool, lowerFirst(ended.Feedback)))
	case ended.Feedback != "":
		return deny(ended.Feedback)
	default:
		return deny(fmt.Sprintf("%s denied permission to use %s.", ended.DecidedBy, req.tool))
	}
}

// permissionArgs reads permission_prompt's arguments. A request it cannot take comes back
// with why it is denied.
func permissionArgs(args map[string]any) (permissionRequest, string) {
	req := permissionRequest{tool: DefaultToolName, input: map[string]any{}}
	tool, why := permissionText(args, "tool_name")
	if why != "" {
		return req, why
	}
	if tool != "" {
		req.tool, req.named = tool, true
	}
	if n := utf8.RuneCountInString(req.tool); n > store.MaxToolName {
		return req, fmt.Sprintf("The tool name is %d characters; at most %d are allowed, so permission was not asked for.", n, store.MaxToolName)
	}
	if req.toolUseID, why = permissionText(args, "tool_use_id"); why != "" {
		return req, why
	}
	if n := utf8.RuneCountInString(req.toolUseID); n > store.MaxToolName {
		return req, fmt.Sprintf("The tool use id is %d characters; at most %d are allowed, so permission was not asked for.", n, store.MaxToolName)
	}
	// null counts as absent: a hook that sends "input": null next to tool_input means the
	// tool_input, and one that sends only nulls asks about an empty input.
	if v := args["input"]; v != nil {
		req.input = v
	} else if v := args["tool_input"]; v != nil {
		req.input = v
	}
	return req, ""
}

// allow is permission_prompt's grant: the original input, unmasked.
func allow(input any) (catalog.Result, error) {
	return permissionResult(map[string]any{"behavior": "allow", "updatedInput": input})
}

// deny is permission_prompt's refusal with its reason.
// permissionText reads an optional text field of a permission request, trimmed; absent and null
// are "". Any other type is unexpected, and the contract answers anything unexpected with a
// denial: guessing which tool a number names could ask people about the wrong one. The reason
// comes back as the second value.
func permissionText(args map[string]any, name string) (string, string) {
	v := args[name]
	if v == nil {
		return "", ""
	}
	text, ok := v.(string)
	if !ok {
		return "", fmt.Sprintf("The request's %s is not a string, so permission was not asked for.", name)
	}
	return strings.TrimSpace(text), ""
}

func deny(message string) (catalog.Result, error) {
	return permissionResult(map[string]any{"behavior": "deny", "message": message})
}

func permissionResult(v map[string]any) (catalog.Result, error) {
	b, err := canonjson.Marshal(v)
	if err != nil {
		return catalog.Result{}, err
	}
	return catalog.Result{Value: string(b)}, nil
}

// lowerFirst turns a sentence into a clause: "Nobody decided." → "nobody decided.".
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || r >= utf8.RuneSelf {
		return s
	}
	return strings.ToLower(string(r)) + s[n:]
}

// oversizeAllow reports whether an allow result would pass the receipt's outcome budget: it
// would reach the engine cut short, as text it cannot parse, so such an input is denied at
// once instead.
func oversizeAllow(res catalog.Result) bool {
	b, err := canonjson.Marshal(res.Value)
	return err != nil || len(b) > response.MaxOutcomeBytes
}
