package response

import (
	"regexp"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/grant"
)

// Spec describes a response when it is opened.
type Spec struct {
	Agent     string
	Requester string
	Channel   string
	Thread    string
	ShellMode string // ShellModeStandard or ShellModeMinimal; empty means standard
	WorkerKey string // empty: shells run on the primary
	// Origin is why the turn runs (see Origins); empty means OriginForeground.
	Origin string
	// Flags are the turn's capabilities and traits: FlagClean, FlagProgressReport,
	// FlagRequesterTrusted, and others the runtime passes through.
	Flags            []string
	ContextDocuments []Document
	Toolkits         []string // selection patterns; empty selects every toolkit
	GrantLifetime    time.Duration
}

// Document is a named context document.
type Document struct {
	Name string
	Text string
}

// Shell modes: which functions a response's catalog offers. A response keeps its mode until it
// closes.
const (
	// ShellModeStandard offers only functions that finish inside the command that calls them
	// (catalog.View.Standard).
	ShellModeStandard = "standard"
	// ShellModeMinimal offers every function of the response's toolkits, including the shell
	// toolkit's background commands.
	ShellModeMinimal = "minimal"
)

// Origins of a turn (contract: interaction controls).
const (
	OriginForeground = "foreground"
	OriginBackground = "background"
	OriginScheduled  = "scheduled"
	OriginRecovery   = "recovery"
	OriginAPI        = "api"
)

// Response flags with a meaning to the primary.
const (
	// FlagClean: the response has no interaction toolkit.
	FlagClean = "clean"
	// FlagProgressReport: the response may report progress.
	FlagProgressReport = "progress_report"
	// FlagRequesterTrusted: the requester is a trusted person.
	FlagRequesterTrusted = "requester_trusted"
)

// InteractionToolkit is the toolkit a clean response does not offer.
const InteractionToolkit = "interaction"

// HasFlag reports whether the spec carries flag.
func (s *Spec) HasFlag(flag string) bool { return slices.Contains(s.Flags, flag) }

// Limits on what a response is opened with.
const (
	MaxIdentityLength   = 256
	MaxFlags            = 32
	MaxDocuments        = 64
	MaxDocumentBytes    = 1 << 20
	MaxToolkitPatterns  = 64
	MaxBashCallIDLength = 128
	MaxFlagLength       = 128
)

// ValidIdentity reports whether v may be a requester, channel, thread or worker key: the one
// rule for those fields, wherever they arrive (a response's spec, an operator's filter).
func ValidIdentity(v string) bool { return validName(v, MaxIdentityLength) }

// validName reports whether v is valid UTF-8 of at most max bytes without control characters
// (NUL, newlines, escapes): identities and flags are shown to people and written to logs.
func validName(v string, max int) bool {
	if len(v) > max || !utf8.ValidString(v) {
		return false
	}
	for _, c := range v {
		if unicode.IsControl(c) {
			return false
		}
	}
	return true
}

// agentNamePattern keeps agent names usable as directory names.
var agentNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Validate reports the first problem with s as an Invalid error.
func (s *Spec) Validate() error {
	if !agentNamePattern.MatchString(s.Agent) {
		return fault.Newf(fault.InvalidArgument, "agent_name must be 1..64 characters of letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	for _, f := range []struct{ name, v string }{{"requester_id", s.Requester}, {"conversation.channel", s.Channel},
		{"conversation.thread", s.Thread}, {"worker_key", s.WorkerKey}} {
		if !ValidIdentity(f.v) {
			return fault.Newf(fault.InvalidArgument, "%s must be valid UTF-8 of at most %d bytes without control characters", f.name, MaxIdentityLength)
		}
	}
	switch s.ShellMode {
	case "":
		s.ShellMode = ShellModeStandard
	case ShellModeStandard, ShellModeMinimal:
	default:
		return fault.Newf(fault.InvalidArgument, "shell_mode must be standard or minimal")
	}
	switch s.Origin {
	case "":
		s.Origin = OriginForeground
	case OriginForeground, OriginBackground, OriginScheduled, OriginRecovery, OriginAPI:
	default:
		return fault.Newf(fault.InvalidArgument, "origin must be foreground, background, scheduled, recovery or api")
	}
	if len(s.Flags) > MaxFlags {
		return fault.Newf(fault.InvalidArgument, "at most %d flags", MaxFlags)
	}
	for _, f := range s.Flags {
		if f == "" || !validName(f, MaxFlagLength) {
			return fault.Newf(fault.InvalidArgument, "flags must be 1..%d bytes of UTF-8 without control characters", MaxFlagLength)
		}
	}
	if len(s.Toolkits) > MaxToolkitPatterns {
		return fault.Newf(fault.InvalidArgument, "at most %d toolkit patterns", MaxToolkitPatterns)
	}
	for _, p := range s.Toolkits {
		if !catalog.ValidPattern(p) {
			return fault.Newf(fault.InvalidArgument, "toolkit pattern %q is not a valid pattern", p)
		}
	}
	if len(s.ContextDocuments) > MaxDocuments {
		return fault.Newf(fault.InvalidArgument, "at most %d context documents", MaxDocuments)
	}
	seen := make(map[string]bool, len(s.ContextDocuments))
	for _, d := range s.ContextDocuments {
		if n := utf8.RuneCountInString(d.Name); n < 1 || n > 128 || !utf8.ValidString(d.Name) {
			return fault.Newf(fault.InvalidArgument, "context document names must be 1..128 characters")
		}
		if seen[d.Name] {
			return fault.Newf(fault.InvalidArgument, "context document %q is given twice", d.Name)
		}
		seen[d.Name] = true
		if len(d.Text) > MaxDocumentBytes || !utf8.ValidString(d.Text) {
			return fault.Newf(fault.InvalidArgument, "context document %q must be valid UTF-8 of at most %d bytes", d.Name, MaxDocumentBytes)
		}
	}
	if s.GrantLifetime < 0 || s.GrantLifetime > grant.MaxLifetime {
		return fault.Newf(fault.InvalidArgument, "grant_lifetime must be between 0 and 24h")
	}
	return nil
}

// Path is the way an Agent CLI request reached the primary: its loopback listener (a
// primary-local shell) or a worker's sandbox proxy.
type Path struct {
	// WorkerKey and WorkerID name the authenticated worker whose proxy forwarded the request;
	// both are empty for the primary's own loopback listener.
	WorkerKey string
	WorkerID  string
}

// LocalPath is the primary's loopback Agent CLI listener.
var LocalPath = Path{}
