package main

import (
	"slices"
	"syscall"
	"time"
)

// median of vs (the mean of the middle two for an even count); 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// quantile of vs for q in [0,1] (nearest rank); 0 for none.
func quantile(vs []float64, q float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratios divides each value by the floor of the same round.
func ratios(values, floors []float64) []float64 {
	out := make([]float64, 0, len(values))
	for i := range min(len(values), len(floors)) {
		if floors[i] != 0 {
			out = append(out, values[i]/floors[i])
		}
	}
	return out
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// jain is Jain's fairness index of xs: (Σx)² / (n·Σx²), 1 when all are equal and 1/n when one
// holds everything; 1 for none or all zero.
func jain(xs []float64) float64 {
	var sum, squares float64
	for _, x := range xs {
		sum += x
		squares += x * x
	}
	if squares == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * squares)
}
