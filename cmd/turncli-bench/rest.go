package main

import (
	"context"
	"fmt"
)

// measureREST counts completed calls per second over the primary's loopback Agent CLI listener:
// 64 clients, each with its own keep-alive connection and its own primary-local response,
// each submitting tools.call test.echo and long-polling GET ?wait= until the receipt is
// completed, then starting over. The floor is the same clients, same two requests, against the
// net/http JSON echo (benchfloor.HTTPHandler), the two taking turns (see loadRounds).
func measureREST(ctx context.Context, b *bench) ([]row, error) {
	r, err := startRig(ctx, b.cfg, false)
	if err != nil {
		return nil, err
	}
	defer r.stop()
	floorURL, stopFloor, err := serveHTTPFloor()
	if err != nil {
		return nil, err
	}
	defer stopFloor()

	s := b.cfg.scale
	primaryOps := make([]func(context.Context) error, s.loadClients)
	floorOps := make([]func(context.Context) error, s.loadClients)
	for i := range s.loadClients {
		sh, err := r.openShell(ctx, "")
		if err != nil {
			return nil, err
		}
		c := newRESTClient(sh)
		defer c.close()
		used := 0
		primaryOps[i] = func(ctx context.Context) error {
			if used == 1000 { // a response holds at most 1024 receipts: move to a fresh one
				old := c.shell.responseID
				fresh, err := r.openShell(ctx, "")
				if err != nil {
					return err
				}
				c.shell = fresh
				if err := r.closeResponse(ctx, old); err != nil {
					return fmt.Errorf("CloseResponse: %w", err)
				}
				used = 0
			}
			used++
			return c.complete(ctx, "test", "echo", "{}")
		}
		fc := newRESTClient(shell{origin: floorURL, token: "floor", window: "floor"})
		defer fc.close()
		floorOps[i] = func(ctx context.Context) error { return fc.complete(ctx, "test", "echo", "{}") }
	}
	values, floors, cpu, floorCPU, err := loadRounds(ctx, s, primaryOps, floorOps)
	if err != nil {
		return nil, err
	}
	return []row{{
		key: "rest", measure: fmt.Sprintf("completed calls/s over REST, %d keep-alive clients", s.loadClients), unit: perSec,
		value: median(values), floor: median(floors), rounds: values, floors: floors, ratios: ratios(values, floors),
		note: fmt.Sprintf("CPU of this process (servers and clients) per completed call: %.0f µs, %s %.0f µs (%.2f×)",
			median(cpu), "net/http floor", median(floorCPU), median(ratios(cpu, floorCPU))),
		target: target{kind: ratioAtLeast, limit: 0.3, text: "≥ 0.3× net/http JSON echo"},
	}}, nil
}
