package main

import (
	"fmt"
	"math"
	"strings"
)

// placedWorker is what the fleet's placement measure knows of one worker after its commands ran.
type placedWorker struct {
	key      string
	capacity int
	commands int
}

// placementStats is how evenly the fleet's keys spread their commands; each figure is the
// worst key's.
type placementStats struct {
	jainCount      float64 // Jain's index of commands per worker
	jainByCapacity float64 // Jain's index of commands per unit of capacity
	// shareSpread is the largest, over the keys, of the busiest worker's commands per unit of
	// capacity over the idlest one's; +Inf when a worker ran nothing.
	shareSpread float64
	idle        int    // workers that ran nothing, over all keys
	spread      string // per key in keys' order, "busiest/idlest" in commands
}

// placementOf judges each key in keys by its own workers only: the primary places a response
// on a worker of the response's key, so keys are never compared with each other.
func placementOf(keys []string, workers []placedWorker) placementStats {
	st := placementStats{jainCount: 1, jainByCapacity: 1, shareSpread: 1}
	var spreads []string
	for _, key := range keys {
		var counts, shares []float64
		lo, hi := math.MaxInt, 0
		loShare, hiShare := math.Inf(1), 0.0
		for _, w := range workers {
			if w.key != key {
				continue
			}
			if w.commands == 0 {
				st.idle++
			}
			share := float64(w.commands) / float64(w.capacity)
			counts = append(counts, float64(w.commands))
			shares = append(shares, share)
			lo, hi = min(lo, w.commands), max(hi, w.commands)
			loShare, hiShare = min(loShare, share), max(hiShare, share)
		}
		if len(counts) == 0 {
			continue
		}
		st.jainCount = min(st.jainCount, jain(counts))
		st.jainByCapacity = min(st.jainByCapacity, jain(shares))
		switch {
		case hiShare == 0: // nothing ran on the key: even, if uninformative
		case loShare == 0:
			st.shareSpread = math.Inf(1)
		default:
			st.shareSpread = max(st.shareSpread, hiShare/loShare)
		}
		spreads = append(spreads, fmt.Sprintf("%d/%d", hi, lo))
	}
	st.spread = strings.Join(spreads, ", ")
	return st
}

// placementRow judges the placement by its count index and by every worker having run
// something. Shares of capacity are recorded, not judged: the primary places a response on the
// least busy worker of its key counting commands, not shares of capacity, so while no worker is
// full a capacity-8 worker runs about as many commands as a capacity-1 one.
func placementRow(st placementStats, workers int) row {
	r := row{
		key: "fleet-placement", measure: "placement: Jain's index of commands per worker within a key (1 = even), the worst key",
		unit: index, value: st.jainCount,
		target: target{kind: valueAtLeast, limit: 0.9, text: "≥ 0.90, no worker idle"},
		note: fmt.Sprintf("by capacity share (commands/capacity): Jain's index %.2f, busiest/idlest %s; workers given no command: %d of %d; busiest/idlest worker of each key in commands: %s",
			st.jainByCapacity, times(st.shareSpread), st.idle, workers, st.spread),
	}
	if st.idle > 0 {
		r.broken = fmt.Sprintf("%d of %d workers ran no command", st.idle, workers)
	}
	return r
}

// times formats a ratio, ∞ for an idle denominator.
func times(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.1f×", v)
}
