package store

import (
	"encoding/json"
	"unicode/utf8"
)

// EngineRun is how an engine driver's run of an agent job went, as the driver reported it.
type EngineRun struct {
	// Session resumes the engine's conversation: Claude Code's session id, Codex's thread id.
	Session      string   `json:"session_id,omitempty"`
	Turns        int      `json:"turns,omitempty"`
	CostUSD      float64  `json:"cost_usd,omitempty"`
	InputTokens  int64    `json:"input_tokens,omitempty"`
	OutputTokens int64    `json:"output_tokens,omitempty"`
	StopReason   string   `json:"stop_reason,omitempty"`
	IsError      bool     `json:"is_error,omitempty"`
	Errors       []string `json:"errors,omitempty"`
	// Runs is how many times the engine ran: one more for each resume after parking.
	Runs int `json:"runs,omitempty"`
}

// Parking is what a parked agent job needs to resume.
type Parking struct {
	// Session is the engine's conversation to resume.
	Session string `json:"session_id"`
	// PromptID is the permission prompt the job waits on.
	PromptID int64 `json:"prompt_id"`
	// ToolUseID and Tool name the engine's tool use the prompt asks about.
	ToolUseID string `json:"tool_use_id"`
	Tool      string `json:"tool"`
	// Home is the engine's own directory of the job (its configuration and sessions).
	Home string `json:"home"`
	// Toolkits are the toolkits of the job's response, which the resumed response offers too.
	Toolkits []string `json:"toolkits,omitempty"`
}

// Limits of the JSON an engine run and a parking record are stored as (the jobs table's
// engine_run and parking columns).
const (
	MaxEngineRunBytes = 65536
	MaxParkingBytes   = 65536
	// MaxEngineName bounds NewJob.Engine.
	MaxEngineName = 32
)

// encodeJSON is v as JSON text within max bytes, or an invalid-argument error naming what.
func encodeJSON(what string, v any, max int) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", invalid("%s cannot be encoded: %v", what, err)
	}
	if len(b) > max {
		return "", invalid("%s is %d bytes as JSON; at most %d are allowed", what, len(b), max)
	}
	if !utf8.Valid(b) {
		return "", invalid("%s is not valid UTF-8", what)
	}
	return string(b), nil
}

// EncodeEngineRun is the stored text of r: empty for nil.
func EncodeEngineRun(r *EngineRun) (string, error) {
	if r == nil {
		return "", nil
	}
	return encodeJSON("an engine run", r, MaxEngineRunBytes)
}

// DecodeEngineRun reads what EncodeEngineRun stored: nil for empty or unreadable text.
func DecodeEngineRun(s string) *EngineRun {
	if s == "" {
		return nil
	}
	var r EngineRun
	if json.Unmarshal([]byte(s), &r) != nil {
		return nil
	}
	return &r
}

// EncodeParking is the stored text of p: empty for nil.
func EncodeParking(p *Parking) (string, error) {
	if p == nil {
		return "", nil
	}
	return encodeJSON("a parking record", p, MaxParkingBytes)
}

// DecodeParking reads what EncodeParking stored: nil for empty or unreadable text.
func DecodeParking(s string) *Parking {
	if s == "" {
		return nil
	}
	var p Parking
	if json.Unmarshal([]byte(s), &p) != nil {
		return nil
	}
	return &p
}
