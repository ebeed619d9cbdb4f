// Package fieldrule is the one home of the rules for the ids and names requests carry: for
// each kind of field (a response id, a call id, a conversation's channel, an agent name, …)
// its length and the characters it may hold. Every route applies the same rule to the same
// field: the interceptor checks each request's fields by their proto name at any depth, and
// the code that takes such a field from elsewhere (the Agent CLI's own decoding, a response's
// spec, the store's operator names) calls Valid or Check of the same kind.
//
// No rule admits NUL or another control character: ids and names are shown to people,
// written to logs and used in paths. Presence is not a rule here: an empty scalar is left to
// the handler, which knows whether the field is required. Numeric ids (jobs, approvals,
// prompts, questions, call approvals) have no rule here: an id that names nothing is
// NOT_FOUND wherever it is given.
package fieldrule

import (
	"fmt"
	"regexp"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/turncli/turncli/internal/fault"
)

// Kind is a kind of field.
type Kind int

// The kinds of field.
const (
	// ResponseID names a response (the primary makes them as UUIDs): 1..64 bytes of printable
	// ASCII, so that an unknown one is NOT_FOUND, not a malformed one.
	ResponseID Kind = iota + 1
	// CallID is an Agent CLI call's id: a UUID, in any spelling uuid.Parse takes.
	CallID
	// BashCallID is the runtime's id of a Bash command: 1..128 characters.
	BashCallID
	// Channel, Thread, Requester and WorkerKey are identities: at most 256 bytes.
	Channel
	Thread
	Requester
	WorkerKey
	// AgentName is 1..64 letters, digits, '.', '_' or '-', starting with a letter or digit: it
	// names directories.
	AgentName
	// OperatorName is 1..128 letters, digits and . _ : @ = + -, starting with a letter, digit
	// or @.
	OperatorName
	// Flag is one of a response's flags: 1..128 bytes.
	Flag
	// Surface names a chat system people answer from (matrix, slack): 1..32 of a-z, 0-9,
	// '_' or '-'.
	Surface
	// ChatUserID is a person's account on a surface (@ada:example.org, U024BE7LH): 1..255
	// bytes of UTF-8 without control characters.
	ChatUserID
	// Person is who a chat account is linked to: a requester id or an operator name, so the
	// operator name's characters, and at most the 64 bytes an operator's stored name has.
	Person
)

// Bounds of the kinds, in the unit their rule counts.
const (
	MaxResponseID   = 64
	MaxBashCallID   = 128 // characters
	MaxIdentity     = 256
	MaxAgentName    = 64
	MaxOperatorName = 128
	MaxFlag         = 128
	MaxSurface      = 32
	MaxChatUserID   = 255
	MaxPerson       = 64
)

var (
	agentName    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	operatorName = regexp.MustCompile(`^[A-Za-z0-9@][A-Za-z0-9._:@=+-]{0,127}$`)
	surface      = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)
	person       = regexp.MustCompile(`^[A-Za-z0-9@][A-Za-z0-9._:@=+-]{0,63}$`)
)

// rule is a kind's rule: valid reports whether a value is allowed; says is what the rule
// asks for, after "<field> must be ".
type rule struct {
	valid func(string) bool
	says  string
}

var rules = map[Kind]rule{
	ResponseID: {func(v string) bool { return len(v) >= 1 && len(v) <= MaxResponseID && printableASCII(v) },
		fmt.Sprintf("1..%d bytes of printable ASCII", MaxResponseID)},
	CallID: {func(v string) bool { _, err := uuid.Parse(v); return err == nil && noControl(v) }, "a UUID"},
	BashCallID: {func(v string) bool {
		n := utf8.RuneCountInString(v)
		return n >= 1 && n <= MaxBashCallID && utf8.ValidString(v) && noControl(v)
	}, fmt.Sprintf("1..%d characters without control characters", MaxBashCallID)},
	Channel:   identity,
	Thread:    identity,
	Requester: identity,
	WorkerKey: identity,
	AgentName: {agentName.MatchString,
		fmt.Sprintf("1..%d characters of letters, digits, '.', '_' or '-', starting with a letter or digit", MaxAgentName)},
	OperatorName: {operatorName.MatchString,
		fmt.Sprintf("1..%d letters, digits and . _ : @ = + -, starting with a letter, digit or @", MaxOperatorName)},
	Flag: {func(v string) bool { return len(v) >= 1 && len(v) <= MaxFlag && utf8.ValidString(v) && noControl(v) },
		fmt.Sprintf("1..%d bytes of UTF-8 without control characters", MaxFlag)},
	Surface: {surface.MatchString, fmt.Sprintf("1..%d of a-z, 0-9, '_' or '-'", MaxSurface)},
	ChatUserID: {func(v string) bool {
		return len(v) >= 1 && len(v) <= MaxChatUserID && utf8.ValidString(v) && noControl(v)
	}, fmt.Sprintf("1..%d bytes of UTF-8 without control characters", MaxChatUserID)},
	Person: {person.MatchString,
		fmt.Sprintf("1..%d letters, digits and . _ : @ = + -, starting with a letter, digit or @", MaxPerson)},
}

var identity = rule{func(v string) bool { return len(v) <= MaxIdentity && utf8.ValidString(v) && noControl(v) },
	fmt.Sprintf("valid UTF-8 of at most %d bytes without control characters", MaxIdentity)}

// Valid reports whether v is allowed as a field of kind k.
func Valid(k Kind, v string) bool { return rules[k].valid(v) }

// Check returns nil when v is allowed as a field of kind k, else a fault.InvalidArgument
// naming the field as field (its proto path, e.g. "conversation.channel").
func Check(k Kind, field, v string) error {
	r := rules[k]
	if r.valid(v) {
		return nil
	}
	return fault.Newf(fault.InvalidArgument, "%s must be %s", field, r.says)
}

func noControl(v string) bool {
	for _, c := range v {
		if unicode.IsControl(c) {
			return false
		}
	}
	return true
}

func printableASCII(v string) bool {
	for i := range len(v) {
		if v[i] < '!' || v[i] > '~' {
			return false
		}
	}
	return true
}
