package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/turncli/turncli/client"
)

// permissionPrompt is the function that asks the conversation's people.
const (
	interactionToolkit = "interaction"
	permissionPrompt   = "permission_prompt"
)

// waitRound bounds one long poll of the prompt's receipt; the driver polls again until the
// receipt is terminal, however long people take.
const waitRound = time.Minute

// verdict is what people decided about one approval request. Only allow lets the action run.
type verdict struct {
	allow bool
	// why says, when not allowed, why: people's message or what went wrong.
	why string
}

// ask submits interaction.permission_prompt for the tool use and waits until it is decided.
// Anything but a completed receipt whose decision is allow is a denial.
func ask(ctx context.Context, agent *client.Agent, tool string, input map[string]any, toolUseID string) verdict {
	conn, err := agent.Connect()
	if err != nil {
		return verdict{why: "nobody could be asked: " + err.Error()}
	}
	callID, err := agent.NewCallID()
	if err != nil {
		return verdict{why: "nobody could be asked: " + err.Error()}
	}
	r, err := conn.Post(ctx, map[string]any{
		"operation": "tools.call", "call_id": callID,
		"toolkit": interactionToolkit, "function": permissionPrompt,
		"arguments": map[string]any{"tool_name": tool, "input": input, "tool_use_id": toolUseID},
	})
	if err != nil {
		return verdict{why: "the request for permission failed: " + err.Error()}
	}
	for {
		status, err := r.Status()
		if err != nil {
			return verdict{why: "the answer to the request could not be read: " + err.Error()}
		}
		if client.IsTerminal(status) {
			return decision(r.Object(), status)
		}
		if ctx.Err() != nil {
			return verdict{why: "the driver stopped before anyone decided"}
		}
		next, err := conn.Wait(ctx, callID, r, time.Now().Add(waitRound))
		if err != nil {
			if ctx.Err() != nil {
				return verdict{why: "the driver stopped before anyone decided"}
			}
			return verdict{why: "waiting for the decision failed: " + err.Error()}
		}
		r = next
	}
}

// decision reads a terminal permission_prompt receipt: its outcome is a JSON text (or object)
// {"behavior":"allow"|"deny","message":…}.
func decision(receipt map[string]any, status string) verdict {
	if status != client.StatusCompleted {
		return verdict{why: fmt.Sprintf("the request was %s before anyone decided", status)}
	}
	var d struct {
		Behavior string `json:"behavior"`
		Message  string `json:"message"`
	}
	switch o := receipt["outcome"].(type) {
	case string:
		_ = json.Unmarshal([]byte(o), &d)
	case map[string]any:
		d.Behavior, _ = o["behavior"].(string)
		d.Message, _ = o["message"].(string)
	}
	switch d.Behavior {
	case "allow":
		return verdict{allow: true}
	case "deny":
		if strings.TrimSpace(d.Message) == "" {
			d.Message = "denied"
		}
		return verdict{why: d.Message}
	}
	return verdict{why: "the answer to the request was not a decision"}
}
