// Package events is the primary's live feed for people: every durable approval, permission
// prompt, question, progress snapshot and job change is published here, and the operator API
// streams it to subscribers. (Live responses are listed, not streamed.)
//
// It keeps nothing durable (the store does) and never blocks a publisher: a subscriber that
// falls behind by more than its buffer is told so with a gap event and catches up from the
// operator API's lists.
package events

import (
	"encoding/json"
	"sync"
	"time"
)

// Event is one change.
type Event struct {
	// Seq increases by one per published event.
	Seq uint64
	At  time.Time
	// Kind is "<area>.<change>", for example "approval.created" or "progress.updated".
	Kind string
	// Subject names what changed, for example "approval/7" or "response/<id>".
	Subject string
	// Data is the changed record, as JSON-able values; never secret values (a redacting bus
	// replaces a record holding a live secret with its redacted JSON, a json.RawMessage).
	Data any
}

// KindGap is the kind of the event a lagging subscriber gets in place of those it missed.
const KindGap = "events.gap"

// DefaultBuffer is how many events a subscriber may fall behind by.
const DefaultBuffer = 256

// Bus fans events out to subscribers. The zero value is not usable; call New.
type Bus struct {
	now    func() time.Time
	redact func(string) string // nil: events are published as they come

	mu   sync.Mutex
	seq  uint64
	subs map[*subscription]struct{}
}

type subscription struct {
	ch     chan Event
	lagged bool // events were dropped since the last one delivered
}

// New returns a Bus without subscribers.
func New() *Bus { return &Bus{now: time.Now, subs: map[*subscription]struct{}{}} }

// NewRedacting returns a Bus that passes every event's data, as JSON, through redact (a
// registry of live secrets): the records published hold texts agents and tools wrote, which
// may quote a credential under any key.
func NewRedacting(redact func(string) string) *Bus {
	b := New()
	b.redact = redact
	return b
}

// redacted returns data, or its JSON with secrets redacted when it holds any. Data that
// cannot be encoded is dropped whole: it could not be shown safely.
func (b *Bus) redacted(data any) any {
	if b.redact == nil || data == nil {
		return data
	}
	text, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	// The mark has no quote or backslash, so JSON with a secret replaced stays JSON.
	if r := b.redact(string(text)); r != string(text) {
		return json.RawMessage(r)
	}
	return data
}

// Publish sends an event to every subscriber without waiting for any.
func (b *Bus) Publish(kind, subject string, data any) {
	data = b.redacted(data)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	ev := Event{Seq: b.seq, At: b.now(), Kind: kind, Subject: subject, Data: data}
	for s := range b.subs {
		if s.lagged {
			select {
			case s.ch <- Event{Seq: ev.Seq, At: ev.At, Kind: KindGap}:
				s.lagged = false
			default:
				continue
			}
		}
		select {
		case s.ch <- ev:
		default:
			s.lagged = true
		}
	}
}

// Subscribe returns a channel of the events published from now on, and a function that ends
// the subscription (and closes the channel). buffer ≤ 0 means DefaultBuffer.
func (b *Bus) Subscribe(buffer int) (<-chan Event, func()) {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	s := &subscription{ch: make(chan Event, buffer)}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, s)
			b.mu.Unlock()
			close(s.ch)
		})
	}
}
