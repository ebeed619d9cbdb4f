package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/turncli/turncli/internal/connlimit"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/response"
)

// waitTargetKiB is the most memory one parked long poll may hold.
const waitTargetKiB = 16

// measureWaits parks 20,000 long-poll GETs (?wait=30) on unfinished calls and measures how long
// after their tool finishes each one completes. The calls are test.gate calls on one gate,
// spread 64 per response (the concurrency limit) over ⌈20000/64⌉ = 313 primary-local responses
// and admitted over REST. The long polls come from a child process (`turncli-bench waiters`),
// one keep-alive HTTP/1.1 connection per wait (a connection carries one request at a time), so
// that this process's RSS is the primary's (plus the harness's small share) rather than the
// clients'. Both processes raise RLIMIT_NOFILE to what the waits need, as far as the hard limit
// lets them; where it is too low for all of them, fewer waits run and the rows say so. When the
// child has written every request it says so; after a settling pause the harness records its
// memory and RSS and releases the gate, noting the time; the child notes when each completed
// receipt arrived (wall clock, the same on both sides of one machine). The value is the slowest
// wait of all rounds.
//
// The floor of both the latency and the memory per wait is the first round's requests, byte
// for byte, from the same child to a bare net/http server whose handler parks each GET at once
// (waitsFloor): what net/http alone holds for a request on its own connection, and how fast it
// answers them all.
func measureWaits(ctx context.Context, b *bench) ([]row, error) {
	s := b.cfg.scale
	soft, hard, err := raiseNoFile(uint64(s.waits + 4*waitsFDReserve))
	if err != nil {
		return nil, err
	}
	var worst, rssParked, cpu, clientCPU []float64
	var first waitsResult
	var lat []float64
	asked, completedAll, early := 0, 0, 0
	var failures []string
	for round := 0; round < s.waitRounds; round++ {
		res, err := waitsRound(ctx, b, s.waits, soft, fmt.Sprint("bench-gate-", round))
		if err != nil {
			return nil, err
		}
		worst = append(worst, res.worst)
		lat = append(lat, res.latencies...)
		rssParked = append(rssParked, res.rssParked)
		cpu, clientCPU = append(cpu, res.cpuPerWait), append(clientCPU, res.clientCPUPerWait)
		if round == 0 {
			first = res // memory growth is read in the first round, before any earlier round's residue
		}
		asked += res.waits
		completedAll += len(res.latencies) + res.early
		early += res.early
		if res.failure != "" {
			failures = append(failures, res.failure)
		}
	}
	n := first.waits
	var floor waitsFloorResult
	if n > 0 {
		if floor, err = waitsFloor(ctx, b, first.calls, soft); err != nil {
			return nil, err
		}
		if floor.failure != "" {
			failures = append(failures, "floor: "+floor.failure)
		}
	}
	limits := fmt.Sprintf("RLIMIT_NOFILE soft limit raised to %d in both processes", soft)
	if n < s.waits {
		limits = fmt.Sprintf("%d waits of the %d this measure is for: RLIMIT_NOFILE's hard limit is %d and cannot be raised here, "+
			"and this process holds one descriptor per wait beside its own", n, s.waits, hard)
	}
	waitRow := row{
		key: "waits", measure: fmt.Sprintf("%d concurrent long-poll waits: slowest completion after the tool finished", n), unit: millis,
		value: quantile(worst, 1), rounds: worst, floor: floor.worst,
		target: target{kind: valueAtMost, limit: 1000, text: "all answered ≤ 1 s after the release"},
		note: fmt.Sprintf("%d of %d waits completed over %d rounds; after release p50 %.1f ms, p99 %.1f ms, max %.1f ms; "+
			"%d answered before release; CPU per wait from release to last answer: primary process %.0f µs (floor %.0f µs), clients %.0f µs; "+
			"one keep-alive HTTP/1.1 connection per wait from a child process; %s",
			completedAll, asked, s.waitRounds, quantile(lat, 0.5), quantile(lat, 0.99), quantile(lat, 1), early,
			median(cpu), floor.cpu, median(clientCPU), limits),
	}
	if completedAll != asked || early != 0 || n == 0 {
		waitRow.broken = strings.Join(append(failures, fmt.Sprintf("%d of %d waits completed, %d of them answered before the release (not parked)", completedAll, asked, early)), "; ")
	}
	wait := first.parked.minus(first.admitted).per(n)
	withCall := first.parked.minus(first.before).per(n)
	memRow := row{
		key: "waits-memory", measure: "memory per parked long-poll wait (heap + goroutine stacks)", unit: kibibytes,
		value: wait.total() / 1024, floor: floor.perWait.total() / 1024,
		target: target{kind: valueAtMost, limit: waitTargetKiB, text: fmt.Sprintf("≤ %d KiB", waitTargetKiB)},
		note: fmt.Sprintf("growth from the calls blocked in their tool to the waits parked, per wait: heap in use %.1f KiB, goroutine stacks %.1f KiB, "+
			"goroutines %.2f (runtime.MemStats HeapInuse and StackInuse, each read after two collections); with the call it waits on "+
			"(a test.gate call blocked in its tool, counted from before the calls were admitted) %.1f KiB: heap %.1f KiB, stacks %.1f KiB, goroutines %.2f; "+
			"floor, the same GETs parked at once by a bare net/http handler: heap %.1f KiB, stacks %.1f KiB, goroutines %.2f",
			wait.heap/1024, wait.stacks/1024, wait.goroutines,
			withCall.total()/1024, withCall.heap/1024, withCall.stacks/1024, withCall.goroutines,
			floor.perWait.heap/1024, floor.perWait.stacks/1024, floor.perWait.goroutines),
	}
	rssRow := row{
		key: "waits-rss", measure: fmt.Sprintf("primary RSS with %d waits parked", n), unit: mebibytes,
		value: median(rssParked), rounds: rssParked,
		target: target{kind: recordedValue, text: "recorded"},
		note: fmt.Sprintf("VmRSS of the process hosting the primary (and the harness; the clients are a child process), %.1f MiB before the calls of the first round were admitted",
			first.rssBefore),
	}
	return []row{waitRow, memRow, rssRow}, nil
}

type waitsResult struct {
	waits     int        // long polls parked (want, or what fits under RLIMIT_NOFILE)
	calls     []waitCall // their requests, for the floor
	worst     float64    // ms from release to the last completion
	latencies []float64  // ms from release, per completed wait answered after it
	early     int        // completed waits answered before the release (not parked)
	rssBefore float64    // MiB
	rssParked float64    // MiB
	// This process's Go memory before the calls were admitted, once they were blocked in their
	// tool, and with the long polls parked on them.
	before, admitted, parked goMemory
	// CPU time per wait (µs) from the release to the last answer: this process (the primary)
	// and the child (the clients).
	cpuPerWait, clientCPUPerWait float64
	failure                      string
}

func waitsRound(ctx context.Context, b *bench, want int, nofile uint64, gate string) (waitsResult, error) {
	var res waitsResult
	n := waitsThatFit(want, nofile)
	// Every wait is a connection of its own from this machine, so the primary's connection
	// limits (--max-conns-per-address, --max-conns; 1024 from one address by default) are
	// raised to hold them all, as an operator expecting this many waits would.
	r, err := startRig(ctx, b.cfg, false, func(c *primary.Config) {
		c.Connections.Limits = connlimit.Config{PerAddress: n + waitsFDReserve, Total: n + 2*waitsFDReserve}
	})
	if err != nil {
		return res, err
	}
	defer r.stop()
	res.waits = n
	if n == 0 {
		return res, nil
	}
	debug.FreeOSMemory()
	res.rssBefore = rssMiB()
	res.before = readGoMemory()

	// Admit n gate calls, 64 per response.
	res.calls = make([]waitCall, n)
	perResponse := response.MaxConcurrent
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for start := 0; start < n; start += perResponse {
		g.Go(func() error {
			sh, err := r.openShell(gctx, "")
			if err != nil {
				return err
			}
			c := newRESTClient(sh)
			defer c.close()
			for i := start; i < min(start+perResponse, n); i++ {
				id, _, err := c.call(gctx, "test", "gate", `{"name":"`+gate+`"}`)
				if err != nil {
					return err
				}
				res.calls[i] = waitCall{Token: sh.token, Window: sh.window, CallID: id}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return res, err
	}
	res.admitted = readGoMemory()

	job := waitersJob{Origin: r.agentCLIURL, Wait: "30", Parallel: 128, NoFile: nofile, Calls: res.calls}
	run, err := runWaiters(ctx, b, job, func() {
		res.rssParked = rssMiB()
		res.parked = readGoMemory()
		b.heapProfile("waits")
		b.goroutineProfile("waits")
	}, func() { r.p.Internals().TestToolkit.Release(gate) })
	if err != nil {
		return res, err
	}
	res.cpuPerWait = float64(run.cpu) / float64(time.Microsecond) / float64(n)
	res.clientCPUPerWait = float64(run.out.CPUNanos) / 1e3 / float64(n)
	res.latencies, res.worst, res.early = run.afterRelease()
	res.failure = run.failure()
	return res, nil
}
