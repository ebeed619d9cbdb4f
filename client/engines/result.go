package engines

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// ResultPrefix starts the result line. It begins with an ASCII record separator, a control
// character Clean removes from everything else a driver prints.
const ResultPrefix = "\x1eturncli-engine-result "

// Statuses of a Result.
const (
	// StatusFinished: the engine ended its task; Report is its final message. IsError says
	// whether the engine itself counts the run as failed (a turn or budget cap, an API error).
	StatusFinished = "finished"
	// StatusFailed: the engine could not run or stopped without a final message; Errors says
	// why.
	StatusFailed = "failed"
	// StatusParked: the engine stopped on a tool use that waits for people (Parked names it);
	// the run goes on with Session resumed once they decided.
	StatusParked = "parked"
)

// Result is how an engine's run went, as its driver saw it.
type Result struct {
	Engine string `json:"engine"`
	Status string `json:"status"`
	// Report is the engine's final message.
	Report string `json:"report,omitempty"`
	// Session is what resumes the run: Claude Code's session id, Codex's thread id.
	Session string `json:"session_id,omitempty"`
	// Turns is the number of model turns the run took.
	Turns int `json:"turns,omitempty"`
	// CostUSD is what the engine says the run cost, when it says so.
	CostUSD      float64 `json:"cost_usd,omitempty"`
	InputTokens  int64   `json:"input_tokens,omitempty"`
	OutputTokens int64   `json:"output_tokens,omitempty"`
	// StopReason is the engine's own word for why it stopped (for example Claude Code's
	// result subtype "success" or "error_max_turns", Codex's turn status "completed").
	StopReason string `json:"stop_reason,omitempty"`
	// IsError: the engine reports the run as failed.
	IsError bool     `json:"is_error,omitempty"`
	Errors  []string `json:"errors,omitempty"`
	// Parked is the tool use the run waits on, when Status is StatusParked.
	Parked *Parked `json:"parked,omitempty"`
}

// Parked is a tool use whose permission people have not decided yet.
type Parked struct {
	// CallID is the Agent CLI call of interaction.permission_prompt that asks them.
	CallID string `json:"call_id"`
	// ToolUseID is the engine's id of the tool use.
	ToolUseID string `json:"tool_use_id"`
	Tool      string `json:"tool"`
}

// Decision is what people decided about a parked tool use, handed to the resumed run in
// DecisionEnv.
type Decision struct {
	ToolUseID string `json:"tool_use_id"`
	// Behavior is "allow" or "deny".
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

// Environment of a driver besides the Agent CLI's, set by the primary.
const (
	// TaskEnv holds the brief.
	TaskEnv = "MINDROOM_AGENT_TASK"
	// HomeEnv is a directory of the job's own, kept while the job lives: the engine's
	// configuration and sessions live under it, never in the host's or the repository's.
	HomeEnv = "MINDROOM_AGENT_ENGINE_HOME"
	// ResumeEnv, when set, is the Session of a parked run to resume instead of starting.
	ResumeEnv = "MINDROOM_AGENT_RESUME"
	// DecisionEnv, when set with ResumeEnv, is the Decision as JSON.
	DecisionEnv = "MINDROOM_AGENT_DECISION"
	// MaxTurnsEnv and MaxBudgetEnv cap the run (a count of turns; US dollars); empty: no cap
	// beyond the engine's own.
	MaxTurnsEnv  = "MINDROOM_AGENT_MAX_TURNS"
	MaxBudgetEnv = "MINDROOM_AGENT_MAX_BUDGET_USD"
	// HookWaitEnv is how long (a Go duration) a permission hook waits for people before it
	// parks the run; where a run cannot be parked the primary sets it past the prompt's own
	// bound.
	HookWaitEnv = "MINDROOM_AGENT_HOOK_WAIT"
)

// WriteResult writes r as the result line.
func WriteResult(w io.Writer, r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n"+ResultPrefix+string(b)+"\n")
	return err
}

// ParseResult finds the last result line of output. ok is false when there is none or it
// does not parse.
func ParseResult(output []byte) (r Result, ok bool) {
	i := bytes.LastIndex(output, []byte(ResultPrefix))
	if i < 0 || (i > 0 && output[i-1] != '\n') {
		return Result{}, false
	}
	line := output[i+len(ResultPrefix):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	if err := json.Unmarshal(line, &r); err != nil || r.Status == "" {
		return Result{}, false
	}
	return r, true
}

// Output is the part of output before the result line: what the driver showed as progress.
func Output(output []byte) []byte {
	if i := bytes.LastIndex(output, []byte("\n"+ResultPrefix)); i >= 0 {
		return output[:i]
	}
	return output
}

// Clean makes untrusted text safe for a line of the log: control characters other than
// newline and tab are dropped, so none of it can start a result line, move the cursor of a
// terminal that shows the log, or hide text.
func Clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}
