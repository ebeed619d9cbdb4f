package main

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// loadResult is what one closed-loop run counted.
type loadResult struct {
	completed int64
	elapsed   time.Duration // counted time
	cpu       time.Duration // this process's CPU time meanwhile (servers and clients alike)
}

func (r *loadResult) add(o loadResult) {
	r.completed += o.completed
	r.elapsed += o.elapsed
	r.cpu += o.cpu
}

// perSec is the completed ops per second.
func (r loadResult) perSec() float64 { return float64(r.completed) / r.elapsed.Seconds() }

// cpuPerOp is the CPU time per completed op, in µs.
func (r loadResult) cpuPerOp() float64 {
	return float64(r.cpu) / float64(r.completed) / float64(time.Microsecond)
}

// closedLoop runs every op in its own goroutine, each repeating as soon as the last one
// finished, and counts the completed ops over d, after an uncounted warm-up.
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
	return loadResult{completed: c1 - c0, elapsed: t1.Sub(t0), cpu: cpu1 - cpu0}, nil
}

// loadTurns is how many turns each side takes per round of loadRounds.
const loadTurns = 6

// loadRounds runs closed-loop rounds of the measured side and the floor and returns both
// sides' rates and CPU per op (µs), a value per round. Within a round the sides take turns,
// loadTurns each, every turn counting the round's duration over loadTurns after its share of
// the warm-up: where the machine's speed drifts (a shared VM), both sides meet the same drift,
// where whole rounds side by side let one round's side run fast and the other slow.
func loadRounds(ctx context.Context, s scale, measured, floor []func(context.Context) error) (rates, floorRates, cpu, floorCPU []float64, err error) {
	sides := [2][]func(context.Context) error{measured, floor}
	for _, ops := range sides { // a whole warm-up each first: a turn's share is for the hand-over
		if _, err := closedLoop(ctx, s.loadWarmup, 0, ops); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	var perSec, perOp [2][]float64 // by side
	warmup, turn := s.loadWarmup/loadTurns, s.loadDuration/loadTurns
	for round := 0; round < s.rounds; round++ {
		var totals [2]loadResult
		for k := range 2 * loadTurns {
			side := (k + round) % 2 // alternate, and swap who opens each round
			res, err := closedLoop(ctx, warmup, turn, sides[side])
			if err != nil {
				return nil, nil, nil, nil, err
			}
			totals[side].add(res)
		}
		for side, t := range totals {
			if t.completed == 0 {
				return nil, nil, nil, nil, errors.New("no op completed")
			}
			perSec[side], perOp[side] = append(perSec[side], t.perSec()), append(perOp[side], t.cpuPerOp())
		}
	}
	return perSec[0], perSec[1], perOp[0], perOp[1], nil
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
