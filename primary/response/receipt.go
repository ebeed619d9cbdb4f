package response

import (
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
)

// Status is a receipt's status.
type Status uint8

// Receipt statuses, in the order a call moves through them.
const (
	Queued Status = iota + 1
	Running
	Waiting
	Completed
	Failed
	Cancelled
)

var statusNames = [...]string{Queued: "queued", Running: "running", Waiting: "waiting",
	Completed: "completed", Failed: "failed", Cancelled: "cancelled"}

func (s Status) String() string {
	if int(s) < len(statusNames) && s > 0 {
		return statusNames[s]
	}
	return "unknown"
}

// Terminal reports whether s is final.
func (s Status) Terminal() bool { return s >= Completed }

// receipt is one admitted call. Fields below mu are guarded by the owning Response's mutex.
type receipt struct {
	id       uuid.UUID
	toolkit  string
	function string
	args     []byte // canonical arguments: the frozen copy the tool receives, and the replay key
	parent   string
	done     chan struct{} // closed when the status becomes terminal
	// admittedAt is when the call was admitted: its latency to terminal is measured from it.
	admittedAt time.Time
	// approved: a person already approved this exact call (a recovered call), so it runs
	// without asking again.
	approved bool

	status      Status
	outcome     []byte // canonical JSON; nil means null
	attachments []byte // canonical JSON array; nil means []
	// traits are the called function's, known from admission for a loaded toolkit and from
	// dispatch for a deferred one. The Agent CLI's receipt JSON does not carry them (its keys
	// are fixed); the runtime's receipts do.
	traits catalog.Traits
}

// sameOperation reports whether a replayed tools.call asks for exactly this call.
func (rc *receipt) sameOperation(toolkit, function string, args []byte) bool {
	return rc.toolkit == toolkit && rc.function == function && string(rc.args) == string(args)
}

// appendJSON writes the receipt's canonical JSON (contract section 6): every key, nothing else.
func (rc *receipt) appendJSON(b []byte) []byte {
	b = append(b, `{"attachments":`...)
	if rc.attachments == nil {
		b = append(b, "[]"...)
	} else {
		b = append(b, rc.attachments...)
	}
	b = append(b, `,"call_id":"`...)
	b = append(b, rc.id.String()...)
	b = append(b, `","function":`...)
	b, _ = canonjson.Append(b, rc.function)
	b = append(b, `,"outcome":`...)
	if rc.outcome == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, rc.outcome...)
	}
	b = append(b, `,"parent_bash_call_id":`...)
	b, _ = canonjson.Append(b, rc.parent)
	b = append(b, `,"status":"`...)
	b = append(b, rc.status.String()...)
	b = append(b, `","toolkit":`...)
	b, _ = canonjson.Append(b, rc.toolkit)
	return append(b, '}')
}

// ReceiptView is a copy of a receipt for the runtime.
type ReceiptView struct {
	CallID      string
	Toolkit     string
	Function    string
	Status      Status
	Outcome     []byte // canonical JSON, "null" until terminal
	Parent      string
	Attachments []byte // canonical JSON array
	// Traits are the called function's (zero while a deferred toolkit is not loaded yet).
	Traits catalog.Traits
}

// EndsTurn reports whether any of receipts is a completed call of a function that ends the
// turn (run_in_background, run_agent_in_background): the runtime should end the turn.
func EndsTurn(receipts []ReceiptView) bool {
	for _, v := range receipts {
		if v.Status == Completed && v.Traits.EndsTurn {
			return true
		}
	}
	return false
}

func (rc *receipt) view() ReceiptView {
	v := ReceiptView{
		CallID: rc.id.String(), Toolkit: rc.toolkit, Function: rc.function, Status: rc.status,
		Outcome: rc.outcome, Parent: rc.parent, Attachments: rc.attachments, Traits: rc.traits,
	}
	if v.Outcome == nil {
		v.Outcome = []byte("null")
	}
	if v.Attachments == nil {
		v.Attachments = []byte("[]")
	}
	return v
}
