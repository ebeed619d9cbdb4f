package workerhub

import (
	"cmp"
	"slices"
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
