package workerhub

import (
	"cmp"
	"slices"
	"time"
)

// KeyStats counts the connected workers of one worker key at one moment.
type KeyStats struct {
	Key string
	// Connections is the workers of the key connected now.
	Connections int
	// Capacity is the sum of their capacities, of those that declared one (a worker with
	// capacity 0 takes any number of commands and adds nothing here).
	Capacity int
	// InFlight is the commands running on them.
	InFlight int
}

// Stats counts the workers by key, ordered by key: every key that has had a connection since
// the hub started, with zeros once its workers are gone.
func (h *Hub) Stats() []KeyStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]KeyStats, 0, len(h.byKey))
	for key, conns := range h.byKey {
		ks := KeyStats{Key: key, Connections: len(conns)}
		for _, c := range conns {
			ks.Capacity += c.capacity
			ks.InFlight += c.load()
		}
		out = append(out, ks)
	}
	slices.SortFunc(out, func(a, b KeyStats) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// WorkerInfo is one connected worker at one moment.
type WorkerInfo struct {
	Identity
	// Session is the hub's id of its current connection.
	Session string
	// ConnectedAt is when that connection was accepted.
	ConnectedAt time.Time
	// Capacity is how many commands it runs at once (0: no limit); Running is how many it
	// runs now.
	Capacity, Running int
}

// Connected lists the connected workers, ordered by key and then id.
func (h *Hub) Connected() []WorkerInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]WorkerInfo, 0, len(h.byID))
	for _, c := range h.byID {
		out = append(out, WorkerInfo{Identity: c.ident, Session: c.session, ConnectedAt: c.since, Capacity: c.capacity, Running: c.load()})
	}
	slices.SortFunc(out, func(a, b WorkerInfo) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.ID, b.ID))
	})
	return out
}
