package response

import (
	"slices"
	"time"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/fieldrule"
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
	MaxIdentityLength   = fieldrule.MaxIdentity
	MaxFlags            = 32
	MaxDocuments        = 64
	MaxDocumentBytes    = 1 << 20
	MaxToolkitPatterns  = 64
	MaxBashCallIDLength = fieldrule.MaxBashCallID
	MaxFlagLength       = fieldrule.MaxFlag
)

// Validate reports the first problem with s as an Invalid error. Its ids and names follow
// package fieldrule, as on every route that takes them.
func (s *Spec) Validate() error {
	for _, f := range []struct {
		kind     fieldrule.Kind
		name, v  string
		optional bool
	}{
		{fieldrule.AgentName, "agent_name", s.Agent, false},
		{fieldrule.Requester, "requester_id", s.Requester, true},
		{fieldrule.Channel, "conversation.channel", s.Channel, true},
		{fieldrule.Thread, "conversation.thread", s.Thread, true},
		{fieldrule.WorkerKey, "worker_key", s.WorkerKey, true},
	} {
		if f.optional && f.v == "" {
			continue
		}
		if err := fieldrule.Check(f.kind, f.name, f.v); err != nil {
			return err
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
		if err := fieldrule.Check(fieldrule.Flag, "flags", f); err != nil {
			return err
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
