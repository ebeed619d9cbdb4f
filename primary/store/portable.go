package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Portable is the Store every driver shares: it applies the rules the Store interface states
// (required fields, lengths, enum values, which state may move to which, what a transition
// writes with it) and leaves persistence to its Driver. Each method that changes state is one
// Driver.Update; each transition in it reads the record, decides, and writes it back with a
// compare-and-set on the state it read, so a lost race writes nothing.
type Portable struct {
	d       Driver
	now     func() time.Time
	observe func(time.Duration, error)
	told    func()
}

var _ Store = (*Portable)(nil)

// Options tune a Portable; the zero value is ready for production.
type Options struct {
	// Now is the clock for every time the store writes; time.Now when nil.
	Now func() time.Time
	// ObserveTransaction hears of every transaction that changes state, with how long it took
	// (retries included) and its error (nil: none is). It must be quick.
	ObserveTransaction func(time.Duration, error)
	// ThreadEventsCommitted is called after each commit of a transaction that appended to
	// the thread feed (ThreadEvents), so its readers learn of it at once wherever the change
	// was made. It must be quick.
	ThreadEventsCommitted func()
}

// New returns the store over d. Closing the store closes d.
func New(d Driver, opts Options) *Portable {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ObserveTransaction == nil {
		opts.ObserveTransaction = func(time.Duration, error) {}
	}
	if opts.ThreadEventsCommitted == nil {
		opts.ThreadEventsCommitted = func() {}
	}
	return &Portable{d: d, now: opts.Now, observe: opts.ObserveTransaction, told: opts.ThreadEventsCommitted}
}

// Close implements Store.
func (p *Portable) Close() error { return p.d.Close() }

// clock is the time to write now: UTC, to the nanosecond, without a monotonic reading, exactly
// as a driver reads it back.
func (p *Portable) clock() time.Time { return time.Unix(0, p.now().UnixNano()).UTC() }

// update runs f in one driver transaction, and rings ThreadEventsCommitted after its commit
// when f appended to the thread feed: the one place every transition passes, so no engine has
// to remember to wake the feed's readers.
func (p *Portable) update(ctx context.Context, f func(tx Tx) error) error {
	start := time.Now()
	var told bool
	err := p.d.Update(ctx, func(tx Tx) error {
		told = false // a driver may run f again: only the run that commits counts
		return f(tellingTx{Tx: tx, told: &told})
	})
	p.observe(time.Since(start), err)
	if err == nil && told {
		p.told()
	}
	return err
}

// tellingTx is a Tx that notes whether an event was appended to the thread feed.
type tellingTx struct {
	Tx
	told *bool
}

// QueueThreadEvent implements Tx.
func (t tellingTx) QueueThreadEvent(ctx context.Context, e NewThreadEvent, at time.Time) {
	*t.told = true
	t.Tx.QueueThreadEvent(ctx, e, at)
}

// primaryActor is the audit actor of what the primary does by itself.
const primaryActor = "primary"

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Limits of a list.
const (
	defaultListLimit = 100
	maxListLimit     = 1000
)

// listLimit is a list's row limit: zero means defaultListLimit; at most maxListLimit.
func listLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return defaultListLimit, nil
	case limit < 0 || limit > maxListLimit:
		return 0, invalid("limit must be 1..%d", maxListLimit)
	}
	return limit, nil
}

// compactJSON checks that raw is a JSON value opening with open ('{' or '[') and returns it
// compacted.
func compactJSON(what string, raw json.RawMessage, open byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil || buf.Len() == 0 || buf.Bytes()[0] != open {
		kind := "object"
		if open == '[' {
			kind = "array"
		}
		return nil, invalid("%s must be a JSON %s", what, kind)
	}
	return buf.Bytes(), nil
}

// checkChars checks that text is valid UTF-8 of least..most characters.
func checkChars(what, text string, least, most int) error {
	if !utf8.ValidString(text) {
		return invalid("%s must be valid UTF-8", what)
	}
	if n := utf8.RuneCountInString(text); n < least || n > most {
		return invalid("%s is %d characters; %d..%d are allowed", what, n, least, most)
	}
	return nil
}

// checkBytes checks a comment, deny reason or note: valid UTF-8 of least..MaxApprovalComment
// bytes.
func checkBytes(what, text string, least int) error {
	if len(text) < least || len(text) > MaxApprovalComment || !utf8.ValidString(text) {
		return invalid("%s must be %d..%d bytes of UTF-8", what, least, MaxApprovalComment)
	}
	return nil
}

// audit queues an entry whose detail is marshalled from detail; its failure fails tx.
func audit(ctx context.Context, tx Tx, at time.Time, actor, action, subject string, detail any) error {
	b, err := json.Marshal(detail)
	if err == nil {
		b, err = withVia(ctx, b)
	}
	if err != nil {
		return fmt.Errorf("store: audit detail: %w", err)
	}
	tx.QueueAudit(ctx, NewAuditEntry{Actor: actor, Action: action, Subject: subject, Detail: b}, at)
	return nil
}

// AppendAudit implements AuditLog.
func (p *Portable) AppendAudit(ctx context.Context, e NewAuditEntry) (id int64, err error) {
	if e.Actor == "" || e.Action == "" {
		return 0, invalid("an audit entry needs an actor and an action")
	}
	raw := bytes.TrimSpace(e.Detail)
	e.Detail = json.RawMessage("{}")
	if len(raw) > 0 {
		detail, err := compactJSON("an audit detail", raw, '{')
		if err != nil {
			return 0, err
		}
		e.Detail = detail
	}
	at := p.clock()
	err = p.update(ctx, func(tx Tx) (err error) {
		id, err = tx.QueueAudit(ctx, e, at)()
		return err
	})
	return id, err
}

// ListAudit implements AuditLog.
func (p *Portable) ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if err := checkBeforeID(f.BeforeID); err != nil {
		return nil, err
	}
	return p.d.ListAudit(ctx, f)
}

// checkContinuation applies the rules of NewContinuation.
func checkContinuation(c NewContinuation) error {
	switch {
	case c.IdempotencyKey == "" || len(c.IdempotencyKey) > MaxIdempotencyKey:
		return invalid("idempotency key must be 1..%d bytes", MaxIdempotencyKey)
	case c.Channel == "":
		return invalid("a continuation needs a channel")
	case c.Text == "":
		return invalid("a continuation needs a text")
	case len(c.Checkpoint) > MaxCheckpoint:
		return invalid("a continuation's checkpoint exceeds %d bytes", MaxCheckpoint)
	}
	return nil
}

// enqueue checks c and adds it inside tx.
func enqueue(ctx context.Context, tx Tx, c NewContinuation, at time.Time) (int64, bool, error) {
	if err := checkContinuation(c); err != nil {
		return 0, false, err
	}
	return tx.InsertContinuation(ctx, withoutEmptyCheckpoint(c), at)
}

// withoutEmptyCheckpoint is c as drivers store it: an empty checkpoint is none.
func withoutEmptyCheckpoint(c NewContinuation) NewContinuation {
	if len(c.Checkpoint) == 0 {
		c.Checkpoint = nil
	}
	return c
}

// enqueueAll queues every continuation of tell inside tx; a failure fails tx.
func enqueueAll(ctx context.Context, tx Tx, tell []NewContinuation, at time.Time) error {
	for _, c := range tell {
		if err := checkContinuation(c); err != nil {
			return err
		}
		tx.QueueContinuation(ctx, withoutEmptyCheckpoint(c), at)
	}
	return nil
}

// EnqueueContinuation implements Continuations.
func (p *Portable) EnqueueContinuation(ctx context.Context, c NewContinuation) (id int64, created bool, err error) {
	if err := checkContinuation(c); err != nil {
		return 0, false, err
	}
	at := p.clock()
	err = p.update(ctx, func(tx Tx) (err error) {
		id, created, err = enqueue(ctx, tx, c, at)
		return err
	})
	return id, created, err
}

// PendingContinuations implements Continuations.
func (p *Portable) PendingContinuations(ctx context.Context, after int64, limit int) ([]Continuation, error) {
	if limit <= 0 {
		return nil, invalid("limit must be positive")
	}
	return p.d.PendingContinuations(ctx, after, limit)
}

// RecordContinuationDelivery implements Continuations.
func (p *Portable) RecordContinuationDelivery(ctx context.Context, id int64) (attempt int, pending bool, err error) {
	err = p.update(ctx, func(tx Tx) (err error) {
		attempt, pending, err = tx.CountContinuationDelivery(ctx, id)
		return err
	})
	return attempt, pending, err
}

// ContinuationByKey implements Continuations.
func (p *Portable) ContinuationByKey(ctx context.Context, key string) (Continuation, error) {
	if key == "" || len(key) > MaxIdempotencyKey {
		return Continuation{}, invalid("idempotency key must be 1..%d bytes", MaxIdempotencyKey)
	}
	return p.d.ContinuationByKey(ctx, key)
}

// AckContinuation implements Continuations.
func (p *Portable) AckContinuation(ctx context.Context, id int64) error {
	at := p.clock()
	return p.update(ctx, func(tx Tx) error { return tx.AckContinuation(ctx, id, at) })
}

// ConversationMode implements ConversationModes.
func (p *Portable) ConversationMode(ctx context.Context, channel, thread string) (ModeSetting, error) {
	return conversationMode(ctx, p.d, channel, thread)
}

// conversationMode is the stored mode, or the default when none is.
func conversationMode(ctx context.Context, r Reader, channel, thread string) (ModeSetting, error) {
	m, err := r.ConversationMode(ctx, channel, thread)
	if errors.Is(err, ErrNotFound) {
		return ModeSetting{Mode: ModeAsk}, nil
	}
	return m, err
}

// SetConversationMode implements ConversationModes: the mode is written first and the audit
// entry second, in one transaction, so a failed audit write leaves the mode unchanged.
func (p *Portable) SetConversationMode(ctx context.Context, channel, thread string, mode Mode, actor string) (ModeSetting, error) {
	switch {
	case channel == "":
		return ModeSetting{}, invalid("a conversation needs a channel")
	case !mode.Valid():
		return ModeSetting{}, invalid("mode %q is not ask, auto or admin", mode)
	case actor == "":
		return ModeSetting{}, invalid("a mode change needs an actor")
	}
	set := ModeSetting{Mode: mode, UpdatedAt: p.clock(), UpdatedBy: actor}
	err := p.update(ctx, func(tx Tx) error {
		previous, err := conversationMode(ctx, tx, channel, thread)
		if err != nil {
			return fmt.Errorf("store: set conversation mode: %w", err)
		}
		if err := tx.PutConversationMode(ctx, channel, thread, set); err != nil {
			return err
		}
		return audit(ctx, tx, set.UpdatedAt, actor, ActionConversationModeSet, ConversationSubject(channel, thread),
			map[string]string{"channel": channel, "thread": thread, "mode": string(mode), "previous": string(previous.Mode)})
	})
	if err != nil {
		return ModeSetting{}, err
	}
	return set, nil
}
