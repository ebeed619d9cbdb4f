package main

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// loadResult is one closed-loop round.
type loadResult struct {
	perSec    float64       // completed ops per second
	cpuPerOp  time.Duration // this process's CPU time per completed op (servers and clients alike)
	completed int64
}

// closedLoop runs every op in its own goroutine, each repeating as soon as the last one
// finished, and measures the completed ops over d, after an uncounted warm-up.
func closedLoop(ctx context.Context, warmup, d time.Duration, ops []func(context.Context) error) (loadResult, error) {
	var done atomic.Int64
	var stop atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	for _, op := range ops {
		g.Go(func() error {
			for !stop.Load() {
				if err := op(gctx); err != nil {
					return err
				}
				done.Add(1)
			}
			return nil
		})
	}
	sleep(gctx, warmup)
	c0, t0, cpu0 := done.Load(), time.Now(), processCPU()
	sleep(gctx, d)
	c1, t1, cpu1 := done.Load(), time.Now(), processCPU()
	stop.Store(true)
	if err := g.Wait(); err != nil {
		return loadResult{}, err
	}
	n := c1 - c0
	if n == 0 {
		return loadResult{}, errors.New("no op completed")
	}
	return loadResult{perSec: float64(n) / t1.Sub(t0).Seconds(), cpuPerOp: (cpu1 - cpu0) / time.Duration(n), completed: n}, nil
}

// loadRounds alternates closed-loop rounds of the measured side and the floor (see alternate)
// and returns both sides' rates and CPU per op (µs).
func loadRounds(ctx context.Context, s scale, measured, floor []func(context.Context) error) (rates, floorRates, cpu, floorCPU []float64, err error) {
	side := func(ops []func(context.Context) error, cpus *[]float64) func() (float64, error) {
		return func() (float64, error) {
			res, err := closedLoop(ctx, s.loadWarmup, s.loadDuration, ops)
			*cpus = append(*cpus, float64(res.cpuPerOp)/float64(time.Microsecond))
			return res.perSec, err
		}
	}
	rates, floorRates, err = alternate(s.rounds, side(measured, &cpu), side(floor, &floorCPU))
	return rates, floorRates, cpu, floorCPU, err
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// alternate runs a and b once per round, swapping which goes first every round, and returns
// every round's values of each.
func alternate(rounds int, a, b func() (float64, error)) (as, bs []float64, err error) {
	for round := 0; round < rounds; round++ {
		first, second, firstVals, secondVals := a, b, &as, &bs
		if round%2 == 1 {
			first, second, firstVals, secondVals = b, a, &bs, &as
		}
		v, err := first()
		if err != nil {
			return nil, nil, err
		}
		*firstVals = append(*firstVals, v)
		if v, err = second(); err != nil {
			return nil, nil, err
		}
		*secondVals = append(*secondVals, v)
	}
	return as, bs, nil
}
