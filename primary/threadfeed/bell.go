package threadfeed

import "sync"

// Bell wakes the feed's readers. The store rings it after each commit that appended to the
// feed (store.Options.ThreadEventsCommitted), so it is built before the store and handed to
// both; a reader takes Changed before it reads, so an event committed after its read still
// wakes it.
type Bell struct {
	mu      sync.Mutex
	changed chan struct{} // closed, then replaced, by Ring
}

// NewBell returns a bell nobody has rung.
func NewBell() *Bell { return &Bell{changed: make(chan struct{})} }

// Ring wakes every reader waiting on the channel Changed returned.
func (b *Bell) Ring() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.changed)
	b.changed = make(chan struct{})
}

// Changed returns the channel the next Ring closes.
func (b *Bell) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}
