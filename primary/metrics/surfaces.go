package metrics

import "github.com/prometheus/client_golang/prometheus"

// newSurfaceDeliveries counts what the chat surfaces delivered of the thread feed.
func newSurfaceDeliveries() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "surface", Name: "deliveries_total",
		Help: "Cards and report chunks sent to a chat surface (matrix, slack), by what was sent and outcome (ok, failed); a failed one is tried again.",
	}, []string{"surface", "what", "outcome"})
}

// Delivered implements surfaces.Observer.
func (m *Metrics) Delivered(surface, what string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "failed"
	}
	m.surfaceDeliveries.WithLabelValues(surface, what, outcome).Inc()
}
