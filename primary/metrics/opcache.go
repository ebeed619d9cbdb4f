package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// opCache resolves each (kind, outcome) counter once: both come from bounded sets (the
// operation names the adapter parses, and fault kinds), so the map stays small.
type opCache struct {
	vec *prometheus.CounterVec
	mu  sync.RWMutex
	m   map[[2]string]prometheus.Counter
}

func (c *opCache) get(kind, outcome string) prometheus.Counter {
	k := [2]string{kind, outcome}
	c.mu.RLock()
	ctr := c.m[k]
	c.mu.RUnlock()
	if ctr != nil {
		return ctr
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[[2]string]prometheus.Counter)
	}
	if ctr = c.m[k]; ctr == nil {
		ctr = c.vec.WithLabelValues(kind, outcome)
		c.m[k] = ctr
	}
	return ctr
}
