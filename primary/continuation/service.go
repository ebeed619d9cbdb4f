package continuation

import (
	"context"
	"log/slog"
	"sync"

	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	"github.com/turncli/turncli/primary/store"
)

// Config is what a Service needs.
type Config struct {
	Store  store.Continuations
	Logger *slog.Logger
	// BatchSize is how many pending continuations a subscriber reads at once; 100 when zero.
	BatchSize int
}

// Service implements ContinuationService and the primary's Go API for continuations.
type Service struct {
	continuationv1.UnimplementedContinuationServiceServer
	cfg Config

	mu      sync.Mutex
	changed chan struct{} // closed, then replaced, when a continuation is committed
	closed  chan struct{} // closed by Close
	stopped bool
}

// New returns a Service over cfg.Store.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 100
	}
	return &Service{cfg: cfg, changed: make(chan struct{}), closed: make(chan struct{})}
}

// Enqueue commits a continuation for the conversation (channel, thread) and wakes the
// subscribers. key names the event it stands for (for example "job/<id>"): enqueueing a key
// again returns the first continuation's id with created=false and changes nothing, so a
// caller may repeat an Enqueue it is unsure about. Errors are the store's (store.ErrInvalid for
// a missing key, channel or text).
func (s *Service) Enqueue(ctx context.Context, key, channel, thread, text string) (id int64, created bool, err error) {
	id, created, err = s.cfg.Store.EnqueueContinuation(ctx, store.NewContinuation{
		IdempotencyKey: key, Channel: channel, Thread: thread, Text: text,
	})
	if err != nil {
		return 0, false, err
	}
	if created {
		s.Notify()
		s.cfg.Logger.Info("continuation enqueued", "continuation_id", id, "idempotency_key", key)
	}
	return id, created, nil
}

// Notify wakes every subscriber to read the outbox. Enqueue calls it; so must code that
// commits a continuation through another store method (one that writes it in the same
// transaction as the state change causing it), after that transaction commits.
func (s *Service) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
}

// changedSignal returns the channel the next Notify closes. A subscriber takes it before
// reading the outbox, so a continuation committed after that read still wakes it.
func (s *Service) changedSignal() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Close ends every Subscribe stream with UNAVAILABLE and refuses new ones, so a stopping
// primary's graceful stop does not wait for subscribers. Enqueue and Ack keep working while
// the store is open. Closing twice is harmless.
func (s *Service) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		s.stopped = true
		close(s.closed)
	}
}
