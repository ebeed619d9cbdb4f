package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/types/known/durationpb"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary"
)

// secondWorker is the load measure's other worker, beside the rig's own.
const (
	secondWorkerKey        = "bench-b"
	secondWorkerID         = "bench-2"
	secondWorkerCredential = workerCredential + "-b"
)

// measureShells is the realistic load: many agent shells at once — a third primary-local, a
// third on each of two workers — each a real Bash command (RunBash through ResponseService)
// running a script of 20 `mindroom-agent tools call`s the way agents use them: instant tools,
// slow tools (scale × 0.5–4 s), calls from a nested shell, and calls submitted with --timeout 0
// (which exit 3: still running) then waited for with `calls wait`. Every call is timed inside
// the script (EPOCHREALTIME around the process); its overhead is that time less what its tool
// itself takes.
//
// The floor is the same scripts in one shell alone on the same primary, their tools taking
// 2 % as long (still past the fast-call budget, so those calls also take two requests), run
// before the load: the idle median overhead of a call. Reported: p50/p99/max overhead under load
// against that median (target p99 ≤ 3×), completed calls per second per core, this process's CPU
// (the primary and both workers; the shells are children, counted apart) and peak RSS. Beside
// it, what the machine itself gives under the same load: the same scripts with floorclient
// against the net/http floor, run by bash directly, idle and all at once.
func measureShells(ctx context.Context, b *bench) ([]row, error) {
	s := b.cfg.scale
	r, err := startRig(ctx, b.cfg, true, func(c *primary.Config) {
		c.Workers.Credentials.Configured[secondWorkerKey] = secondWorkerCredential
	})
	if err != nil {
		return nil, err
	}
	defer r.stop()
	if err := r.startWorkerAs(ctx, b.cfg, r.dir+"/worker-b", secondWorkerKey, secondWorkerID, secondWorkerCredential); err != nil {
		return nil, err
	}
	keys := []string{"", workerKey, secondWorkerKey}

	floorURL, stopFloor, err := serveHTTPFloor()
	if err != nil {
		return nil, err
	}
	defer stopFloor()
	onTurncli := func(ctx context.Context, i int, script string) ([]callTiming, error) {
		return runShellScript(ctx, r, keys[i%len(keys)], script)
	}
	onFloor := func(ctx context.Context, _ int, script string) ([]callTiming, error) {
		return runFloorScript(ctx, b.cfg.FloorClient, floorURL, script)
	}
	idleScript := func(d dialect) func(int) string {
		return func(i int) string { return shellScript(d, rand.New(rand.NewPCG(0, uint64(i))), 0.02) }
	}
	loadScript := func(d dialect) func(int) string {
		return func(i int) string { return shellScript(d, rand.New(rand.NewPCG(1, uint64(i))), s.shellToolScale) }
	}
	// Idle: one shell at a time, on each path in turn, the first of each uncounted.
	var idle, floorIdle []callTiming
	for i := range 2 * len(keys) {
		t, err := onTurncli(ctx, i, idleScript(agentDialect)(i))
		if err != nil {
			return nil, fmt.Errorf("idle shell: %w", err)
		}
		f, err := onFloor(ctx, i, idleScript(floorDialect)(i))
		if err != nil {
			return nil, fmt.Errorf("idle floor shell: %w", err)
		}
		if i >= len(keys) {
			idle, floorIdle = append(idle, t...), append(floorIdle, f...)
		}
	}
	idleMedian, floorIdleMedian := median(overheads(idle)), median(overheads(floorIdle))

	b.progress("shells: %d concurrent shells, started over %v", s.shells, s.shellRamp)
	load, err := concurrently(ctx, s.shells, s.shellRamp, loadScript(agentDialect), onTurncli)
	if err != nil {
		return nil, err
	}
	b.progress("shells: %d concurrent floor shells", s.shells)
	floorLoad, err := concurrently(ctx, s.shells, s.shellRamp, loadScript(floorDialect), onFloor)
	if err != nil {
		return nil, err
	}
	over, floorOver := overheads(load.timings), overheads(floorLoad.timings)
	p99, floorP99 := quantile(over, 0.99), quantile(floorOver, 0.99)
	calls := float64(len(load.timings))
	cores := float64(runtime.NumCPU())
	return []row{{
		key: "shells", measure: fmt.Sprintf("%d concurrent agent shells × 20 calls (local and on 2 workers): p99 call overhead (floor: idle median)", s.shells), unit: millis,
		value: p99, floor: idleMedian, rounds: []float64{p99}, floors: []float64{idleMedian}, ratios: []float64{p99 / idleMedian},
		target: target{kind: ratioAtMost, limit: 3, text: "≤ 3×"},
		note: fmt.Sprintf("shells started over %v; %.0f calls in %.1f s: overhead (call time less its tool's) p50 %.1f ms, p99 %.1f ms, max %.1f ms against an idle median of %.1f ms; "+
			"%.1f completed calls/s per core (%.0f cores); this process (primary and both workers) %.0f µs CPU per call, the shells and their clients %.1f ms; peak RSS %.0f MiB. "+
			"The machine's floor, the same scripts with floorclient against net/http run by bash directly: idle median %.1f ms, under the same load p50 %.1f ms, p99 %.1f ms (%.1f×) in %.1f s, the shells %.1f ms CPU per call",
			s.shellRamp, calls, load.wall.Seconds(), quantile(over, 0.5), p99, quantile(over, 1), idleMedian,
			calls/load.wall.Seconds()/cores, cores, float64(load.cpu.Microseconds())/calls, ms(load.child)/calls, load.peakRSS,
			floorIdleMedian, quantile(floorOver, 0.5), floorP99, floorP99/floorIdleMedian, floorLoad.wall.Seconds(), ms(floorLoad.child)/calls),
	}}, nil
}

// callTiming is one call of a shell script: its tool's own time and the call's as measured.
type callTiming struct {
	nominal, elapsed time.Duration
}

func overheads(ts []callTiming) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = ms(t.elapsed - t.nominal)
	}
	return out
}

// dialect is how a script spells its calls: with mindroom-agent against turncli, or with the
// floor client against the net/http floor (its slow tools a `sleep` before the call).
type dialect struct {
	prelude      string
	echo, nested string
	sleep        func(seconds string) string
	pending      func(seconds string) string
}

var (
	agentDialect = dialect{
		prelude: `pending() { local id; id=$(</proc/sys/kernel/random/uuid); mindroom-agent tools call test.sleep "{\"seconds\":$1}" --call-id "$id" --timeout 0 || [ $? = 3 ]; mindroom-agent calls wait "$id"; }
`,
		echo:    "mindroom-agent tools call test.echo '{}'",
		nested:  "bash -c \"mindroom-agent tools call test.echo '{}'\"",
		sleep:   func(sec string) string { return "mindroom-agent tools call test.sleep '{\"seconds\":" + sec + "}'" },
		pending: func(sec string) string { return "pending " + sec },
	}
	floorDialect = dialect{
		echo:    "floorclient",
		nested:  "bash -c floorclient",
		sleep:   func(sec string) string { return "eval 'sleep " + sec + "; floorclient'" },
		pending: func(sec string) string { return "eval 'sleep " + sec + "; floorclient; floorclient'" },
	}
)

// shellScript is a script of 20 calls in d whose slow tools take toolScale times their
// 0.5–4 s, in an order drawn from rng. Each call prints "call <tool µs> <µs>".
func shellScript(d dialect, rng *rand.Rand, toolScale float64) string {
	var sb strings.Builder
	sb.WriteString(`set -e
timed() { local nominal=$1; shift; local s=${EPOCHREALTIME/./}; "$@" >/dev/null; local e=${EPOCHREALTIME/./}; echo "call $nominal $((e - s))"; }
`)
	sb.WriteString(d.prelude)
	kinds := []string{"echo", "echo", "echo", "echo", "echo", "echo", "nested", "nested", "nested", "nested",
		"sleep", "sleep", "sleep", "sleep", "sleep", "sleep", "slow", "slow", "pending", "pending"}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for _, kind := range kinds {
		var seconds float64
		switch kind {
		case "sleep":
			seconds = (0.5 + rng.Float64()) * toolScale
		case "slow", "pending":
			seconds = (2 + 2*rng.Float64()) * toolScale
		}
		sec := strconv.FormatFloat(seconds, 'f', 3, 64)
		call := d.echo
		switch kind {
		case "nested":
			call = d.nested
		case "sleep", "slow":
			call = d.sleep(sec)
		case "pending":
			call = d.pending(sec)
		}
		fmt.Fprintf(&sb, "timed %d %s\n", int64(seconds*1e6), call)
	}
	return sb.String()
}

// loadShellTimeout bounds one load shell's script. Its 20 calls take about a minute under the
// full load on two cores where a process starts in a few milliseconds; on a machine where a
// fork costs ten times that, the whole load takes over five minutes, and the measure should
// record that rather than fail.
const loadShellTimeout = 15 * time.Minute

// runShellScript opens a response on key ("" primary-local), runs script in it as one Bash
// command, closes the response and returns the script's call timings.
func runShellScript(ctx context.Context, r *rig, key, script string) ([]callTiming, error) {
	resp, err := r.runtime.OpenResponse(ctx, &responsev1.OpenResponseRequest{
		AgentName: "bench", RequesterId: "@bench:example.org",
		Conversation: &conversationv1.Conversation{Channel: "!bench:example.org", Thread: "$bench"},
		ShellMode:    responsev1.ShellMode_SHELL_MODE_MINIMAL, WorkerKey: key,
	})
	if err != nil {
		return nil, fmt.Errorf("OpenResponse: %w", err)
	}
	defer func() { _ = r.closeResponse(context.WithoutCancel(ctx), resp.GetResponseId()) }()
	var out strings.Builder
	result, err := runBash(ctx, r.runtime, &responsev1.RunBashRequest{ResponseId: resp.GetResponseId(), BashCallId: "load",
		Command: script, Timeout: durationpb.New(loadShellTimeout)}, func(c *responsev1.OutputChunk) { out.Write(c.GetData()) })
	if err != nil {
		return nil, err
	}
	if !succeeded(result) {
		return nil, fmt.Errorf("a load shell (worker key %q) failed: %s; its last calls (tool µs, µs): %q", key, outcome(result), lastLines(out.String(), 3))
	}
	return parseTimings(out.String())
}

// parseTimings reads the "call" lines a script printed: 20 of them.
func parseTimings(out string) ([]callTiming, error) {
	var timings []callTiming
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "call" {
			continue
		}
		nominal, err1 := strconv.ParseInt(f[1], 10, 64)
		elapsed, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("a load shell printed %q", line)
		}
		timings = append(timings, callTiming{nominal: time.Duration(nominal) * time.Microsecond, elapsed: time.Duration(elapsed) * time.Microsecond})
	}
	if len(timings) != 20 {
		return nil, fmt.Errorf("a load shell timed %d calls, want 20; output %q", len(timings), out)
	}
	return timings, nil
}

// runFloorScript runs script with bash directly, the floor client on its PATH.
func runFloorScript(ctx context.Context, floorClient, floorURL, script string) ([]callTiming, error) {
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = []string{"PATH=" + filepath.Dir(floorClient) + ":/usr/bin:/bin", "FLOOR_URL=" + floorURL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("a floor shell failed: %v; output %q", err, out)
	}
	return parseTimings(string(out))
}

// loadRun is one run of many shells at once.
type loadRun struct {
	timings          []callTiming
	wall, cpu, child time.Duration
	peakRSS          float64
}

// concurrently runs n shells at once, shell i running script(i) with run and starting at
// i/n of ramp (agents' turns do not all begin in the same millisecond; a script lasts many
// times the ramp, so all n run together most of the time), and measures the whole.
func concurrently(ctx context.Context, n int, ramp time.Duration, script func(i int) string, run func(ctx context.Context, i int, script string) ([]callTiming, error)) (loadRun, error) {
	rss := startRSSWatch()
	cpu0, child0 := processCPU(), childrenCPU()
	start := time.Now()
	timings := make([][]callTiming, n)
	g, gctx := errgroup.WithContext(ctx)
	for i := range n {
		g.Go(func() error {
			sleep(gctx, time.Until(start.Add(ramp*time.Duration(i)/time.Duration(n))))
			t, err := run(gctx, i, script(i))
			timings[i] = t
			return err
		})
	}
	err := g.Wait()
	res := loadRun{wall: time.Since(start), cpu: processCPU() - cpu0, child: childrenCPU() - child0, peakRSS: rss.stop()}
	for _, t := range timings {
		res.timings = append(res.timings, t...)
	}
	return res, err
}

// childrenCPU is the CPU time of this process's reaped children (the shells and their clients).
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssWatch samples this process's RSS until stopped, keeping the peak.
type rssWatch struct {
	done chan struct{}
	peak chan float64
}

func startRSSWatch() *rssWatch {
	w := &rssWatch{done: make(chan struct{}), peak: make(chan float64, 1)}
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		peak := rssMiB()
		for {
			select {
			case <-tick.C:
				peak = max(peak, rssMiB())
			case <-w.done:
				w.peak <- max(peak, rssMiB())
				return
			}
		}
	}()
	return w
}

// stop ends the watch and returns the peak RSS in MiB.
func (w *rssWatch) stop() float64 {
	close(w.done)
	return <-w.peak
}
