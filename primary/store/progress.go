package store

import (
	"context"
	"encoding/json"
	"time"
)

// Progress keeps each response's latest report_progress snapshot: a new one replaces the
// response's previous one.
type Progress interface {
	// SaveProgress saves p as its response's snapshot, replacing any earlier one. ResponseID,
	// Channel and Title are required and Steps must be a non-empty JSON array (of
	// ProgressStep); a zero UpdatedAt means now.
	SaveProgress(ctx context.Context, p ProgressSnapshot) error
	// ListProgress returns the snapshots matching f, most recently updated first.
	ListProgress(ctx context.Context, f ProgressFilter) ([]ProgressSnapshot, error)
}

// ProgressSnapshot is one response's plan as it last reported it.
type ProgressSnapshot struct {
	ResponseID, Channel, Thread, Agent, Requester, Title string
	// Steps is the JSON array of ProgressStep, in the order reported.
	Steps     json.RawMessage
	UpdatedAt time.Time
}

// ProgressFilter selects snapshots; empty fields match everything.
type ProgressFilter struct {
	ResponseID string
	Channel    string
	// Thread is compared only when Channel is set (an empty thread is a channel's main
	// timeline).
	Thread string
	// After, when set, returns only the snapshots after it in the list's order: the
	// position of the last snapshot of the previous page.
	After ProgressPosition
	// Limit is at most 1000; zero means 100.
	Limit int
}

// ProgressStep is one element of ProgressSnapshot.Steps; every key is always present.
type ProgressStep struct {
	ID      string           `json:"id"`
	Title   string           `json:"title"`
	Status  StepStatus       `json:"status"`
	Details string           `json:"details"`
	Output  string           `json:"output"`
	Sources []ProgressSource `json:"sources"`
}

// ProgressSource is a link a step cites.
type ProgressSource struct {
	URL  string `json:"url"`
	Text string `json:"text"`
}

// StepStatus is a progress step's state.
type StepStatus string

// The step states.
const (
	StepPending    StepStatus = "pending"
	StepInProgress StepStatus = "in_progress"
	StepComplete   StepStatus = "complete"
	StepError      StepStatus = "error"
)
