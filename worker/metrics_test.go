package worker

import (
	"testing"
)

func TestUtilizationIsInFlightOverCapacity(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inFlight int64
		capacity int
		want     float64
	}{
		{"IdleIsZero", 0, 4, 0},
		{"HalfFull", 2, 4, 0.5},
		{"FullIsOne", 4, 4, 1},
		{"OverFullStaysOne", 5, 4, 1},
		{"UnlimitedIsNeverFull", 9, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := utilization(tc.inFlight, tc.capacity); got != tc.want {
				t.Fatalf("utilization(%d, %d) = %v, want %v", tc.inFlight, tc.capacity, got, tc.want)
			}
		})
	}
}

func TestTheRegistryExportsTheUtilizationGauge(t *testing.T) {
	m := newWorkerMetrics(4)
	m.inFlight.Store(3)
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "turncli_worker_"+UtilizationMetric {
			if got := f.GetMetric()[0].GetGauge().GetValue(); got != 0.75 {
				t.Fatalf("%s = %v, want 0.75", f.GetName(), got)
			}
			return
		}
	}
	t.Fatalf("no turncli_worker_%s among %d families", UtilizationMetric, len(families))
}
