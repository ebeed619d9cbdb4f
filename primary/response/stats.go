package response

import "time"

// Observer hears of calls as they settle, for measurements (the primary's metrics). CallSettled
// runs under the response's mutex on the call's path: it must be quick and must not call back
// into the response.
type Observer interface {
	// CallSettled reports a call that became terminal with status s, d after its admission.
	CallSettled(s Status, d time.Duration)
}

type noObserver struct{}

func (noObserver) CallSettled(Status, time.Duration) {}

// Stats counts what the live responses hold at one moment.
type Stats struct {
	// Open is the live responses; Windows their windows that are open or draining; Receipts
	// the receipts they hold.
	Open, Windows, Receipts int
	// ParkedWaits is the long polls waiting for a receipt to become terminal.
	ParkedWaits int
}

// Stats counts the live responses' windows and receipts. It takes each response's mutex in
// turn, briefly, and never waits for calls or commands; a scrape calls it, not a request.
func (m *Manager) Stats() Stats {
	st := Stats{ParkedWaits: int(m.parked.Load())}
	for _, r := range m.List() {
		st.Open++
		r.mu.Lock()
		st.Receipts += len(r.receipts)
		for _, w := range r.windows { // the native window too, once opened

			if w.state != windowClosed {
				st.Windows++
			}
		}
		r.mu.Unlock()
	}
	return st
}
