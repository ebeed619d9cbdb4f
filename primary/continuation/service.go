package continuation

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
)

// Config is what an Outbox needs.
type Config struct {
	Store  store.Continuations
	Logger *slog.Logger
}

// Outbox is the primary's one way to emit a continuation, and what ContinuationService reads.
// It is safe for concurrent use.
type Outbox struct {
	cfg Config

	mu      sync.Mutex
	changed chan struct{} // closed, then replaced, when a continuation is committed
	closed  chan struct{} // closed by Close
	stopped bool
}

// ErrStopping ends a subscription when the outbox closes: the runtime subscribes again, to
// this primary after a restart or to the next one.
var ErrStopping = fault.New(fault.Unavailable, "the primary is stopping; subscribe again")

// ErrNoContinuation is the answer about an id the outbox does not hold.
var ErrNoContinuation = fault.New(fault.NotFound, "no such continuation")

// New returns an Outbox over cfg.Store.
func New(cfg Config) *Outbox {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Outbox{cfg: cfg, changed: make(chan struct{}), closed: make(chan struct{})}
}

// Enqueue commits a continuation for the conversation (channel, thread) and wakes the
// subscribers. key names the event it stands for (for example "job/<id>"): enqueueing a key
// again returns the first continuation's id with created=false and changes nothing, so a
// caller may repeat an Enqueue it is unsure about. Errors are the store's (store.ErrInvalid for
// a missing key, channel or text).
func (o *Outbox) Enqueue(ctx context.Context, key, channel, thread, text string) (id int64, created bool, err error) {
	id, created, err = o.cfg.Store.EnqueueContinuation(ctx, store.NewContinuation{
		IdempotencyKey: key, Channel: channel, Thread: thread, Text: text,
	})
	if err != nil {
		return 0, false, err
	}
	if created {
		o.Notify()
		o.cfg.Logger.Info("continuation enqueued", "continuation_id", id, "idempotency_key", key)
	}
	return id, created, nil
}

// Notify wakes every subscriber to read the outbox. Enqueue calls it; so must code that
// commits a continuation through another store method (one that writes it in the same
// transaction as the state change causing it), after that transaction commits.
func (o *Outbox) Notify() {
	o.mu.Lock()
	defer o.mu.Unlock()
	close(o.changed)
	o.changed = make(chan struct{})
}

// Changed returns the channel the next Notify closes. A subscriber takes it before reading
// the outbox, so a continuation committed after that read still wakes it.
func (o *Outbox) Changed() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

// Closed is closed when the outbox closes: subscriptions end with ErrStopping.
func (o *Outbox) Closed() <-chan struct{} { return o.closed }

// Close ends every subscription and refuses new ones, so a stopping primary's graceful stop
// does not wait for subscribers. Enqueue and Ack keep working while the store is open.
// Closing twice is harmless.
func (o *Outbox) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.stopped {
		o.stopped = true
		close(o.closed)
	}
}

// Pending returns up to limit unacknowledged continuations after the id after, oldest first.
func (o *Outbox) Pending(ctx context.Context, after int64, limit int) ([]store.Continuation, error) {
	batch, err := o.cfg.Store.PendingContinuations(ctx, after, limit)
	return batch, o.storeErr(ctx, err)
}

// RecordDelivery counts one more delivery of continuation id and says whether it is still
// pending (not acknowledged since it was read).
func (o *Outbox) RecordDelivery(ctx context.Context, id int64) (attempt int, pending bool, err error) {
	attempt, pending, err = o.cfg.Store.RecordContinuationDelivery(ctx, id)
	return attempt, pending, o.storeErr(ctx, err)
}

// Ack acknowledges continuation id; acknowledging twice is not an error.
func (o *Outbox) Ack(ctx context.Context, id int64) error {
	if err := o.cfg.Store.AckContinuation(ctx, id); err != nil {
		return o.storeErr(ctx, err)
	}
	o.cfg.Logger.Debug("continuation acknowledged", "continuation_id", id)
	return nil
}

// storeErr is a store error as the runtime reads it: the caller's own end, an unknown id, and
// a refused argument keep their kinds; any other failure of the outbox is logged and is
// Unavailable, since the runtime's retry is the remedy.
func (o *Outbox) storeErr(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, store.ErrNotFound):
		return ErrNoContinuation
	case errors.Is(err, store.ErrInvalid):
		return err
	}
	o.cfg.Logger.Error("continuation store failed", "err", err)
	return fault.New(fault.Unavailable, "the continuation outbox is unavailable; retry")
}
