package main

import (
	"math"
	"testing"
)

func TestPlacementOf(t *testing.T) {
	keys := []string{"a", "b"}
	for _, tc := range []struct {
		name    string
		workers []placedWorker
		want    placementStats
	}{
		{
			name: "EvenCountsOverUnequalCapacitiesAreFairByCountOnly",
			workers: []placedWorker{
				{"a", 1, 4}, {"a", 4, 4},
				{"b", 2, 3}, {"b", 2, 3},
			},
			// shares a: 4 and 1 → (5)²/(2·17)
			want: placementStats{jainCount: 1, jainByCapacity: 25.0 / 34, shareSpread: 4, spread: "4/4, 3/3"},
		},
		{
			name: "CountsInProportionToCapacityAreFairByCapacityOnly",
			workers: []placedWorker{
				{"a", 1, 2}, {"a", 4, 8},
				{"b", 2, 3}, {"b", 2, 3},
			},
			// counts a: 2 and 8 → (10)²/(2·68)
			want: placementStats{jainCount: 100.0 / 136, jainByCapacity: 1, shareSpread: 1, spread: "8/2, 3/3"},
		},
		{
			name: "AnIdleWorkerIsCountedAndMakesTheSpreadInfinite",
			workers: []placedWorker{
				{"a", 1, 2}, {"a", 1, 2},
				{"b", 1, 4}, {"b", 1, 0},
			},
			want: placementStats{jainCount: 0.5, jainByCapacity: 0.5, shareSpread: math.Inf(1), idle: 1, spread: "2/2, 4/0"},
		},
		{
			name: "TheWorstKeyIsReported",
			workers: []placedWorker{
				{"a", 2, 6}, {"a", 2, 2},
				{"b", 1, 3}, {"b", 1, 3},
			},
			// a: (8)²/(2·40) by count and by capacity alike
			want: placementStats{jainCount: 0.8, jainByCapacity: 0.8, shareSpread: 3, spread: "6/2, 3/3"},
		},
		{
			name:    "AKeyWithoutWorkersIsLeftOut",
			workers: []placedWorker{{"a", 1, 1}},
			want:    placementStats{jainCount: 1, jainByCapacity: 1, shareSpread: 1, spread: "1/1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := placementOf(keys, tc.workers)
			near := func(a, b float64) bool { return a == b || math.Abs(a-b) < 1e-9 }
			if !near(got.jainCount, tc.want.jainCount) || !near(got.jainByCapacity, tc.want.jainByCapacity) ||
				!near(got.shareSpread, tc.want.shareSpread) || got.idle != tc.want.idle || got.spread != tc.want.spread {
				t.Fatalf("placementOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPlacementRow(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   placementStats
		met  bool
	}{
		{"AnEvenPlacementMeetsItsTarget", placementStats{jainCount: 0.95, shareSpread: 8}, true},
		{"AnUnevenPlacementMisses", placementStats{jainCount: 0.85, shareSpread: 2}, false},
		{"AnIdleWorkerMissesWhateverTheIndex", placementStats{jainCount: 0.99, shareSpread: math.Inf(1), idle: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if met, judged := placementRow(tc.st, 50).met(); met != tc.met || !judged {
				t.Fatalf("met, judged = %v, %v; want %v, true", met, judged, tc.met)
			}
		})
	}
}
