package store

import (
	"context"
	"net/url"
	"time"
)

// ShellModes keeps the shell mode of each agent in each conversation: the mode a response opened
// without an explicit one takes, where the setting applies to it (ShellModeSetting.AppliesTo).
// Changing it never changes a response that is already open.
type ShellModes interface {
	// ShellMode returns the agent's mode in the conversation: ShellModeStandard with a zero
	// UpdatedAt when it was never set (or was reset).
	ShellMode(ctx context.Context, channel, thread, agent string) (ShellModeSetting, error)
	// SetShellMode stores the agent's mode in the conversation for the placement its shells
	// were checked on (workerKey, empty for the primary's own shells) and appends its audit
	// entry (ActionShellModeSet, with the previous mode) in the same transaction.
	SetShellMode(ctx context.Context, channel, thread, agent string, mode ShellMode, workerKey, actor string) (ShellModeSetting, error)
	// ResetShellMode forgets the stored mode, so the default applies again, and appends its
	// audit entry (ActionShellModeReset, with the previous mode) in the same transaction.
	// Resetting a mode never set is not an error and is audited all the same.
	ResetShellMode(ctx context.Context, channel, thread, agent, actor string) (ShellModeSetting, error)
}

// ShellMode is a response's shell mode: which functions its catalog offers.
type ShellMode string

// The shell modes.
const (
	// ShellModeStandard offers only functions that finish inside a command. The default.
	ShellModeStandard ShellMode = "standard"
	// ShellModeMinimal offers every function, including the shell toolkit's.
	ShellModeMinimal ShellMode = "minimal"
)

// Valid reports whether m is one of the shell modes.
func (m ShellMode) Valid() bool { return m == ShellModeStandard || m == ShellModeMinimal }

// ShellModeSetting is an agent's shell mode in a conversation, the placement it was set for,
// and who set it when.
type ShellModeSetting struct {
	Mode ShellMode
	// WorkerKey is the placement the mode was set for: the worker key whose shells the minimal
	// mode's preflight checked, empty for the primary's own shells. The minimal mode was found
	// usable there only, so it applies only to responses placed there (AppliesTo).
	WorkerKey string
	// Unplaced marks a mode stored before placements were recorded: where it was checked is
	// unknown, so its minimal mode applies to no response until it is set again.
	Unplaced bool
	// UpdatedAt is zero, and UpdatedBy empty, for the default (never set, or reset).
	UpdatedAt time.Time
	UpdatedBy string
}

// AppliesTo reports whether the setting's mode is for a response whose shells run on the
// worker key (empty: the primary's own shells). The standard mode applies everywhere; the
// minimal mode only where its preflight passed.
func (m ShellModeSetting) AppliesTo(workerKey string) bool {
	return m.Mode != ShellModeMinimal || (!m.Unplaced && m.WorkerKey == workerKey)
}

// Audit actions of shell modes.
const (
	// ActionShellModeSet: detail {"channel","thread","agent","mode","worker_key","previous"}.
	ActionShellModeSet = "shell_mode.set"
	// ActionShellModeReset: detail {"channel","thread","agent","previous"}.
	ActionShellModeReset = "shell_mode.reset"
)

// ShellModeSubject is the audit subject of an agent's shell mode in a conversation.
func ShellModeSubject(channel, thread, agent string) string {
	return ConversationSubject(channel, thread) + "/agent/" + url.PathEscape(agent)
}
