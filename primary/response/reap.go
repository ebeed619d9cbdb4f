package response

import (
	"context"
	"sync"
	"time"
)

// Reaping: a response whose grant has expired can serve no shell's call any more, yet it holds
// its windows, receipts and context documents until the runtime closes it. A runtime that
// forgets to (or crashed) would leak them, so the primary closes such responses itself.
const (
	// DefaultReapEvery is how often the primary looks for responses whose grant expired.
	DefaultReapEvery = 30 * time.Second
	// MaxReapedPerSweep bounds the responses one sweep closes, so a sweep never holds up the
	// manager for long; the rest wait for the next one.
	MaxReapedPerSweep = 256
)

// ReapExpired closes up to limit responses whose grant has expired (as the manager's clock
// tells), with their windows and receipts, and returns how many it closed. Closing cancels any
// command still running in them.
func (m *Manager) ReapExpired(limit int) int {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	var expired []*Response
	for _, r := range m.byID {
		if len(expired) >= limit {
			break
		}
		if !now.Before(r.expires) {
			expired = append(expired, r)
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range expired {
		m.cfg.Logger.Info("response grant expired", "response_id", r.id)
		wg.Go(r.Close)
	}
	wg.Wait()
	return len(expired)
}

// RunReaper sweeps for expired responses every Settings.ReapEvery of the manager's clock, at
// most MaxReapedPerSweep each time, until ctx ends.
func (m *Manager) RunReaper(ctx context.Context) {
	t, tick := m.cfg.Clock.NewTicker(m.cfg.Settings.ReapEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			m.ReapExpired(MaxReapedPerSweep)
		}
	}
}
