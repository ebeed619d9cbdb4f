package store

import (
	"context"
	"net/url"
	"time"
)

// ShellModes keeps the shell mode of each agent in each conversation: the mode a response opened
// without an explicit one takes. Changing it never changes a response that is already open.
type ShellModes interface {
	// ShellMode returns the agent's mode in the conversation: ShellModeStandard with a zero
	// UpdatedAt when it was never set (or was reset).
	ShellMode(ctx context.Context, channel, thread, agent string) (ShellModeSetting, error)
	// SetShellMode stores the agent's mode in the conversation and appends its audit entry
	// (ActionShellModeSet, with the previous mode) in the same transaction.
	SetShellMode(ctx context.Context, channel, thread, agent string, mode ShellMode, actor string) (ShellModeSetting, error)
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

// ShellModeSetting is an agent's shell mode in a conversation and who set it when.
type ShellModeSetting struct {
	Mode ShellMode
	// UpdatedAt is zero, and UpdatedBy empty, for the default (never set, or reset).
	UpdatedAt time.Time
	UpdatedBy string
}

// Audit actions of shell modes.
const (
	// ActionShellModeSet: detail {"channel","thread","agent","mode","previous"}.
	ActionShellModeSet = "shell_mode.set"
	// ActionShellModeReset: detail {"channel","thread","agent","previous"}.
	ActionShellModeReset = "shell_mode.reset"
)

// ShellModeSubject is the audit subject of an agent's shell mode in a conversation.
func ShellModeSubject(channel, thread, agent string) string {
	return ConversationSubject(channel, thread) + "/agent/" + url.PathEscape(agent)
}
