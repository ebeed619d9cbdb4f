package main

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/turncli/turncli/internal/otlpsink"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary"
)

// benchTraceparent is the runtime's trace context every traced call continues: sampled, so
// every hop records and exports its span.
const benchTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// measureTracing is the cost of tracing on the call path. Two rigs run side by side, each a
// primary with a worker: one with tracing off, one with tracing on in the primary and the
// worker, exporting every span over OTLP/gRPC to a receiver in this process. Both get the
// same sampled TRACEPARENT, so the off rig still propagates it (its cost is in both).
//
// The process rows time `mindroom-agent tools call test.echo '{}'` through the worker's sandbox
// proxy (the longest path: proxy HTTP span, the forwarded RPC's client and server spans,
// admission and dispatch), the off rig's process being the floor, interleaved. The REST rows
// count completed calls per second of 64 keep-alive clients on the primary's loopback listener,
// the rigs taking turns (see loadRounds).
func measureTracing(ctx context.Context, b *bench) ([]row, error) {
	sink, err := otlpsink.Start(false)
	if err != nil {
		return nil, err
	}
	defer sink.Stop()
	tel, err := telemetry.New(ctx, "turncli-bench", func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": sink.Endpoint()}[k]
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()

	off, err := startTracedRig(ctx, b.cfg, nil)
	if err != nil {
		return nil, err
	}
	defer off.stop()
	on, err := startTracedRig(ctx, b.cfg, tel)
	if err != nil {
		return nil, err
	}
	defer on.stop()

	procRows, err := tracingProcess(ctx, b, off, on)
	if err != nil {
		return nil, err
	}
	restRow, err := tracingREST(ctx, b, off, on)
	if err != nil {
		return nil, err
	}
	if err := tel.ForceFlush(ctx); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	if sink.Count() == 0 {
		return nil, fmt.Errorf("the traced rig exported no span")
	}
	restRow.note += fmt.Sprintf("; %d spans exported in all", sink.Count())
	return append(procRows, restRow), nil
}

// startTracedRig starts a primary and a worker with tel as their tracing (nil: off).
func startTracedRig(ctx context.Context, cfg Config, tel *telemetry.Telemetry) (*rig, error) {
	r, err := startRig(ctx, cfg, false, func(c *primary.Config) { c.Telemetry = tel })
	if err != nil {
		return nil, err
	}
	r.workerTracing = tel
	if err := r.startWorker(ctx, cfg, r.dir+"/worker"); err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

func tracingProcess(ctx context.Context, b *bench, off, on *rig) ([]row, error) {
	type side struct {
		r    *rig
		sh   shell
		used int
	}
	sides := [2]*side{{r: off}, {r: on}}
	command := func(s *side) (*exec.Cmd, error) {
		if s.used%1000 == 0 { // a response holds at most 1024 receipts
			sh, err := s.r.openShell(ctx, workerKey)
			if err != nil {
				return nil, err
			}
			sh.traceparent = benchTraceparent
			s.sh = sh
		}
		s.used++
		cmd := exec.CommandContext(ctx, b.cfg.AgentBinary, "tools", "call", "test.echo", "{}")
		cmd.Env = s.sh.env()
		return cmd, nil
	}
	for _, s := range sides { // warm up, uncounted
		cmd, err := command(s)
		if err != nil {
			return nil, err
		}
		if _, err := timeProcess(cmd); err != nil {
			return nil, err
		}
	}
	sc := b.cfg.scale
	var offVals, onVals []float64
	for round := 0; round < sc.rounds; round++ {
		var walls [2][]float64
		for n := 0; n < sc.processRuns; n++ {
			for k := range 2 {
				which := (n + k) % 2 // rotate, so neither always runs first
				cmd, err := command(sides[which])
				if err != nil {
					return nil, err
				}
				run, err := timeProcess(cmd)
				if err != nil {
					return nil, err
				}
				walls[which] = append(walls[which], ms(run.wall))
			}
		}
		offVals, onVals = append(offVals, median(walls[0])), append(onVals, median(walls[1]))
	}
	return []row{{
		key: "tracing-process", measure: "`mindroom-agent tools call` process through a worker's proxy, tracing on (OTLP) against off", unit: millis,
		value: median(onVals), floor: median(offVals), rounds: onVals, floors: offVals, ratios: ratios(onVals, offVals),
		target: target{kind: ratioAtMost, limit: 1.05, text: "≤ 1.05× tracing off"},
		note:   "both rigs get the same sampled TRACEPARENT; the floor is the rig with tracing off",
	}}, nil
}

func tracingREST(ctx context.Context, b *bench, off, on *rig) (row, error) {
	sc := b.cfg.scale
	ops := func(r *rig) ([]func(context.Context) error, func(), error) {
		fns := make([]func(context.Context) error, sc.loadClients)
		var clients []*restClient
		closeAll := func() {
			for _, c := range clients {
				c.close()
			}
		}
		for i := range sc.loadClients {
			sh, err := r.openShell(ctx, "")
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			sh.traceparent = benchTraceparent
			c := newRESTClient(sh)
			clients = append(clients, c)
			used := 0
			fns[i] = func(ctx context.Context) error {
				if used == 1000 { // a response holds at most 1024 receipts: move to a fresh one
					old := c.shell.responseID
					fresh, err := r.openShell(ctx, "")
					if err != nil {
						return err
					}
					fresh.traceparent = benchTraceparent
					c.shell = fresh
					if err := r.closeResponse(ctx, old); err != nil {
						return fmt.Errorf("CloseResponse: %w", err)
					}
					used = 0
				}
				used++
				return c.complete(ctx, "test", "echo", "{}")
			}
		}
		return fns, closeAll, nil
	}
	offOps, closeOff, err := ops(off)
	if err != nil {
		return row{}, err
	}
	defer closeOff()
	onOps, closeOn, err := ops(on)
	if err != nil {
		return row{}, err
	}
	defer closeOn()
	values, floors, cpu, floorCPU, err := loadRounds(ctx, sc, onOps, offOps)
	if err != nil {
		return row{}, err
	}
	return row{
		key: "tracing-rest", measure: fmt.Sprintf("completed calls/s over REST, %d clients, tracing on (OTLP) against off", sc.loadClients), unit: perSec,
		value: median(values), floor: median(floors), rounds: values, floors: floors, ratios: ratios(values, floors),
		target: target{kind: ratioAtLeast, limit: 0.95, text: "≥ 0.95× tracing off"},
		note: fmt.Sprintf("CPU of this process per completed call: %.0f µs on, %.0f µs off (%.2f×)",
			median(cpu), median(floorCPU), median(ratios(cpu, floorCPU))),
	}, nil
}
