package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	imetrics "github.com/turncli/turncli/internal/metrics"
)

// leaderGauge is turncli_primary_leader: 1 on the primary that serves, 0 on a standby, so
// sum(turncli_primary_leader) over a pair says how many lead (alert when it is not 1).
func leaderGauge(leading bool) prometheus.Collector {
	v := 0.0
	if leading {
		v = 1
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: "primary", Name: "leader",
		Help: "1 while this primary serves (a lone primary, or the leader of an active/standby set), 0 while it stands by."})
	g.Set(v)
	return g
}

// Standby is the registry a standby serves on its metrics listener: the Go runtime and the
// process, and turncli_primary_leader at 0. Everything else belongs to the leader.
func Standby() *prometheus.Registry {
	reg := imetrics.NewRegistry()
	reg.MustRegister(leaderGauge(false))
	return reg
}
