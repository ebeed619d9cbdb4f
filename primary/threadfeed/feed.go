package threadfeed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
)

// Config is what a Feed needs.
type Config struct {
	// Store holds the feed, the items' records, the identity links and the audit log.
	Store store.Store
	// Bell is the one the store rings after a commit that appended to the feed.
	Bell *Bell
	// Redact replaces the live secrets in a text people will read.
	Redact func(string) string
	// The engines a relay calls, as the operator API calls them.
	Background    *interaction.Background
	Prompts       *interaction.Prompts
	Questions     *interaction.Questions
	CallApprovals *response.CallApprovals
	// Modes sets shell modes from a chat's "!mode" command; nil refuses it.
	Modes *shellmode.Modes
	// Reread is how often a waiting reader reads the feed again without being woken, in case
	// a wake-up was missed (another primary's commit); DefaultReread when zero.
	Reread time.Duration
	Clock  clock.Clock
	Logger *slog.Logger
}

// DefaultReread is a waiting reader's pace of reading again unwoken.
const DefaultReread = 30 * time.Second

// batchEvents is how many events a reader reads from the store at once.
const batchEvents = 100

// Feed reads the thread feed for people and relays their decisions. It is safe for
// concurrent use.
type Feed struct {
	cfg Config

	closeOnce sync.Once
	closed    chan struct{}
}

// ErrStopping ends a reader's Follow when the feed closes: the reader follows again from its
// cursor, on this primary after a restart or on the next one.
var ErrStopping = fault.New(fault.Unavailable, "the primary is stopping; subscribe again from your cursor")

// New returns the feed of cfg.
func New(cfg Config) (*Feed, error) {
	switch {
	case cfg.Store == nil || cfg.Bell == nil || cfg.Redact == nil:
		return nil, errors.New("thread feed: a store, a bell and a redactor are required")
	case cfg.Background == nil || cfg.Prompts == nil || cfg.Questions == nil || cfg.CallApprovals == nil:
		return nil, errors.New("thread feed: the engines a relay calls are required")
	}
	if cfg.Reread <= 0 {
		cfg.Reread = DefaultReread
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Feed{cfg: cfg, closed: make(chan struct{})}, nil
}

// Close ends every Follow and refuses new ones, so a stopping primary's graceful stop does
// not wait for its readers. Reads and relays keep working while the store is open. Closing
// twice is harmless.
func (f *Feed) Close() { f.closeOnce.Do(func() { close(f.closed) }) }

// Read returns the messages after from, as v sees them: each event's item as it now stands,
// followed by its report's chunks, for at most limit events (1..batchEvents; a report is not
// split across reads). It returns nothing when no event follows from. The last message's
// cursor is where to read next.
func (f *Feed) Read(ctx context.Context, from Cursor, v View, limit int) ([]Message, error) {
	if limit < 1 || limit > batchEvents {
		return nil, fault.Newf(fault.InvalidArgument, "a read takes 1..%d events", batchEvents)
	}
	var out []Message
	_, _, err := f.read(ctx, from, v, limit, func(m Message) error {
		out = append(out, m)
		return nil
	})
	return out, err
}

// Check refuses, as Follow would and without reading, a cursor the feed did not give, a view
// out of bounds, and any following once the feed closed (ErrStopping).
func (f *Feed) Check(from Cursor, v View) error {
	select {
	case <-f.closed:
		return ErrStopping
	default:
	}
	if _, err := v.withDefaults(); err != nil {
		return err
	}
	_, err := parseCursor(from)
	return err
}

// Follow sends every message after from to send, as Read would, then each new one as its
// event commits, until ctx ends, send fails or the feed closes (ErrStopping). It blocks
// between events on the bell and on a slow periodic read.
func (f *Feed) Follow(ctx context.Context, from Cursor, v View, send func(Message) error) error {
	if err := f.Check(from, v); err != nil {
		return err
	}
	ticker, tick := f.cfg.Clock.NewTicker(f.cfg.Reread)
	defer ticker.Stop()
	for {
		select {
		case <-f.closed:
			return ErrStopping
		default:
		}
		changed := f.cfg.Bell.Changed()
		next, full, err := f.read(ctx, from, v, batchEvents, send)
		if err != nil {
			return err
		}
		from = next
		if full {
			continue // there may be more already
		}
		select {
		case <-changed:
		case <-tick:
		case <-f.closed:
			return ErrStopping
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// read sends the messages of up to limit events after from and returns the cursor after
// them, and whether it read limit events (more may follow).
func (f *Feed) read(ctx context.Context, from Cursor, v View, limit int, send func(Message) error) (Cursor, bool, error) {
	v, err := v.withDefaults()
	if err != nil {
		return from, false, err
	}
	at, err := parseCursor(from)
	if err != nil {
		return from, false, err
	}
	after := at.event
	if at.mid {
		after-- // the event whose report was cut off is read again, for the rest of it
	}
	events, err := f.cfg.Store.ListThreadEvents(ctx, store.ThreadEventFilter{After: after, Channel: v.Channel, Thread: v.Thread, Limit: limit})
	if err != nil {
		return from, false, f.storeErr(ctx, err)
	}
	for _, e := range events {
		skip := 0
		if at.mid && e.ID == at.event {
			skip = at.chunks
		} else if at.mid && e.ID > at.event {
			at.mid = false // the event is not this view's: its rest is not either
		}
		if err := f.sendEvent(ctx, e, v, skip, at.mid && e.ID == at.event, send); err != nil {
			return from, false, err
		}
		from, at.mid = place{event: e.ID}.cursor(), false
	}
	return from, len(events) == limit, nil
}

// sendEvent sends event e's item (unless resuming its report) and its report's chunks from
// skip on.
func (f *Feed) sendEvent(ctx context.Context, e store.ThreadEvent, v View, skip int, resuming bool, send func(Message) error) error {
	it, report, err := f.render(ctx, e, v)
	if err != nil {
		return f.storeErr(ctx, err)
	}
	chunks := cut(report, v.ChunkBytes)
	it.Report = Report{Chunks: len(chunks), Bytes: len(report)}
	at := func(read int) Cursor {
		if read >= len(chunks) {
			return place{event: e.ID}.cursor()
		}
		return place{event: e.ID, chunks: read, mid: true}.cursor()
	}
	if !resuming {
		if err := send(Message{Item: &it, Cursor: at(0)}); err != nil {
			return err
		}
	}
	for i := skip; i < len(chunks); i++ {
		c := Chunk{Key: it.Key, Index: i, Count: len(chunks), Text: chunks[i]}
		if err := send(Message{Chunk: &c, Cursor: at(i + 1)}); err != nil {
			return err
		}
	}
	return nil
}

// storeErr is a failure to read as a reader sees it: its own end, or Unavailable, logged.
func (f *Feed) storeErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if k, ok := fault.KindOf(err); ok && k == fault.InvalidArgument {
		return err
	}
	f.cfg.Logger.Error("thread feed read failed", "err", err)
	return fault.New(fault.Unavailable, "the thread feed cannot be read now; retry from your cursor")
}
