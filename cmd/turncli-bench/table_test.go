package main

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestMedianAndQuantile(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       []float64
		median   float64
		max, p50 float64
	}{
		{"Empty", nil, 0, 0, 0},
		{"Odd", []float64{3, 1, 2}, 2, 3, 2},
		{"EvenAveragesTheMiddleTwo", []float64{4, 1, 3, 2}, 2.5, 4, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := median(tc.in); got != tc.median {
				t.Errorf("median %v, want %v", got, tc.median)
			}
			if got := quantile(tc.in, 1); got != tc.max {
				t.Errorf("max %v, want %v", got, tc.max)
			}
			if got := quantile(tc.in, 0.5); got != tc.p50 {
				t.Errorf("p50 %v, want %v", got, tc.p50)
			}
		})
	}
}

func TestRowsAreJudgedByTheirTarget(t *testing.T) {
	atMost := target{kind: ratioAtMost, limit: 1.25}
	for _, tc := range []struct {
		name        string
		r           row
		met, judged bool
	}{
		{"RatioOfRoundsWinsOverRatioOfMedians", row{value: 10, floor: 5, ratios: []float64{1.1, 1.2, 1.3}, target: atMost}, true, true},
		{"RatioOverTheLimitMisses", row{value: 13, floor: 10, target: atMost}, false, true},
		{"AtLeastMeetsAtTheLimit", row{value: 3, floor: 10, target: target{kind: ratioAtLeast, limit: 0.3}}, true, true},
		{"ValueAtMost", row{value: 1025, target: target{kind: valueAtMost, limit: 1024}}, false, true},
		{"ValueAtLeastMeetsAtTheLimit", row{value: 0.9, target: target{kind: valueAtLeast, limit: 0.9}}, true, true},
		{"ValueBelowItsLeastMisses", row{value: 0.89, target: target{kind: valueAtLeast, limit: 0.9}}, false, true},
		{"BrokenRowMissesWhateverItsValue", row{value: 1, target: target{kind: valueAtMost, limit: 1000}, broken: "3 waits failed"}, false, true},
		{"FailedMeasureMisses", row{target: target{kind: completes}, broken: "a load shell timed out"}, false, true},
		{"RecordedValueIsNotJudged", row{value: 300, target: target{kind: recordedValue}}, false, false},
		{"SkippedRowIsNeitherMetNorMissed", row{value: 1, target: atMost, skipped: "bwrap not found"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if met, judged := tc.r.met(); met != tc.met || judged != tc.judged {
				t.Errorf("met, judged = %v, %v; want %v, %v", met, judged, tc.met, tc.judged)
			}
		})
	}
}

func TestSmokeTablesJudgeNothing(t *testing.T) {
	rows := []row{{measure: "m", unit: millis, value: 2, floor: 1, target: target{kind: ratioAtMost, limit: 1.25, text: "≤ 1.25×"}}}
	var full, smoke strings.Builder
	writeMarkdown(&full, rows, false)
	writeMarkdown(&smoke, rows, true)
	if !strings.Contains(full.String(), "| m | 2.00 ms | 1.00 ms | 2.00× | ≤ 1.25× | **NO** |") {
		t.Errorf("full table:\n%s", full.String())
	}
	if !strings.Contains(smoke.String(), "| m | 2.00 ms | 1.00 ms | 2.00× | ≤ 1.25× | — |") {
		t.Errorf("smoke table:\n%s", smoke.String())
	}
}

func TestSkippedRowsSayWhyAndAreCounted(t *testing.T) {
	rows := []row{
		{key: "a", measure: "a", unit: millis, value: 2, floor: 1, target: target{kind: ratioAtMost, limit: 3, text: "≤ 3×"}},
		{key: "b", measure: "b", unit: millis, value: 2, target: target{kind: ratioAtMost, limit: 1.2, text: "≤ 1.2×"}, skipped: "bwrap not found"},
	}
	if judged, met, skipped := summary(rows); judged != 1 || met != 1 || skipped != 1 {
		t.Errorf("summary = %d judged, %d met, %d skipped; want 1, 1, 1", judged, met, skipped)
	}
	var md, text strings.Builder
	writeMarkdown(&md, rows, false)
	printTable(&text, rows, false, false)
	for name, out := range map[string]string{"markdown": md.String(), "text": text.String()} {
		if !strings.Contains(out, "skipped") || !strings.Contains(out, "SKIPPED: bwrap not found") {
			t.Errorf("%s table does not say the row was skipped and why:\n%s", name, out)
		}
	}
}

func TestJainsIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"EvenIsOne", []float64{3, 3, 3, 3}, 1},
		{"OneHoldingAllIsOneOverN", []float64{8, 0, 0, 0}, 0.25},
		{"HalfAndHalf", []float64{1, 1, 0, 0}, 0.5},
		{"NothingIsEven", []float64{0, 0}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jain(tc.xs); math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("jain(%v) = %v, want %v", tc.xs, got, tc.want)
			}
		})
	}
}

func TestQuantileIsTheNearestRank(t *testing.T) {
	upTo := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(n - i) // descending: quantile sorts
		}
		return xs
	}
	for _, tc := range []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{"P99OfAHundredIsTheNinetyNinth", upTo(100), 0.99, 99},
		{"P99OfFiveHundredIsTheFourHundredNinetyFifth", upTo(500), 0.99, 495},
		{"P99OfTenIsTheLargest", upTo(10), 0.99, 10},
		{"P50OfFiveHundredIsTheTwoHundredFiftieth", upTo(500), 0.5, 250},
		{"QuantileZeroIsTheSmallest", upTo(10), 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := quantile(tc.xs, tc.q); got != tc.want {
				t.Fatalf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func TestAFailedMeasureLeavesTheOthersInTheTable(t *testing.T) {
	saved := measures
	t.Cleanup(func() { measures = saved })
	measures = []measure{
		{"first", "fails", func(context.Context, *bench) ([]row, error) { return nil, errors.New("a load shell timed out") }},
		{"second", "runs", func(context.Context, *bench) ([]row, error) {
			return []row{{key: "second", measure: "second measure", unit: millis, value: 2, target: target{kind: recordedValue}}}, nil
		}},
	}
	var out, errs strings.Builder
	code := run(context.Background(), Config{only: regexp.MustCompile(".")}, &out, &errs)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	for _, want := range []string{"first: fails", "second measure", "2.00 ms", "first: FAILED: a load shell timed out", "1 measures FAILED", "0 of 1 targets met"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestAnInterruptedRunStopsAtTheFailure(t *testing.T) {
	saved := measures
	t.Cleanup(func() { measures = saved })
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	measures = []measure{
		{"first", "interrupted", func(context.Context, *bench) ([]row, error) { cancel(); return nil, context.Canceled }},
		{"second", "never runs", func(context.Context, *bench) ([]row, error) { ran = true; return nil, nil }},
	}
	var out, errs strings.Builder
	if code := run(ctx, Config{only: regexp.MustCompile(".")}, &out, &errs); code != 1 || ran {
		t.Errorf("exit code %d, second measure ran %v; want 1, false", code, ran)
	}
}
