package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/turncli/turncli/primary/response"
)

// measureWaits parks 5,000 long-poll GETs (?wait=30) on unfinished calls and measures how long
// after their tool finishes each one completes. The calls are test.gate calls on one gate,
// spread 64 per response (the concurrency limit) over ⌈5000/64⌉ = 79 primary-local responses
// and admitted over REST. The long polls come from a child process (`turncli-bench waiters`),
// one keep-alive HTTP/1.1 connection per wait (a connection carries one request at a time), so
// that this process's RSS is the primary's (plus the harness's small share) rather than the
// clients'. Both processes raise RLIMIT_NOFILE to its hard limit. When the child has written
// every request it says so; after a settling pause the harness records its RSS and releases
// the gate, noting the time; the child notes when each completed receipt arrived (wall clock,
// the same on both sides of one machine). The value is the slowest wait of all rounds.
func measureWaits(ctx context.Context, b *bench) ([]row, error) {
	s := b.cfg.scale
	nofile, err := raiseNoFile()
	if err != nil {
		return nil, err
	}
	var worst, rssParked, cpu, clientCPU []float64
	var first waitsResult
	var lat []float64
	completedAll, early := 0, 0
	var failures []string
	for round := 0; round < s.waitRounds; round++ {
		res, err := waitsRound(ctx, b, s.waits, fmt.Sprint("bench-gate-", round))
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
		completedAll += len(res.latencies) + res.early
		early += res.early
		if res.failure != "" {
			failures = append(failures, res.failure)
		}
	}
	want := s.waits * s.waitRounds
	waitRow := row{
		key: "waits", measure: fmt.Sprintf("%d concurrent long-poll waits: slowest completion after the tool finished", s.waits), unit: millis,
		value: quantile(worst, 1), rounds: worst,
		target: target{kind: valueAtMost, limit: 1000, text: "all within 1 s"},
		note: fmt.Sprintf("%d of %d waits completed over %d rounds; after release p50 %.1f ms, p99 %.1f ms, max %.1f ms; "+
			"%d answered before release; CPU per wait from release to last answer: primary process %.0f µs, clients %.0f µs; "+
			"one keep-alive HTTP/1.1 connection per wait from a child process; RLIMIT_NOFILE soft limit raised to %d in both processes",
			completedAll, want, s.waitRounds, quantile(lat, 0.5), quantile(lat, 0.99), quantile(lat, 1), early,
			median(cpu), median(clientCPU), nofile),
	}
	if completedAll != want || early != 0 {
		waitRow.broken = strings.Join(append(failures, fmt.Sprintf("%d of %d waits completed, %d of them answered before the release (not parked)", completedAll, want, early)), "; ")
	}
	rssRow := row{
		key: "waits-rss", measure: fmt.Sprintf("primary RSS with %d waits parked", s.waits), unit: mebibytes,
		value: median(rssParked), rounds: rssParked,
		target: target{kind: recordedValue, text: "recorded"},
		note: fmt.Sprintf("VmRSS of the process hosting the primary (and the harness; the clients are a child process), %.1f MiB before the calls of the first round were admitted; "+
			"per parked wait (call admitted, long poll parked) the Go heap in use grew %.1f KiB, goroutine stacks %.1f KiB, goroutines %.1f",
			first.rssBefore, first.heapPerWait/1024, first.stackPerWait/1024, first.goroutinesPerWait),
	}
	return []row{waitRow, rssRow}, nil
}

type waitsResult struct {
	worst     float64   // ms from release to the last completion
	latencies []float64 // ms from release, per completed wait answered after it
	early     int       // completed waits answered before the release (not parked)
	rssBefore float64   // MiB
	rssParked float64   // MiB
	// Growth per parked wait of the Go heap in use and of goroutine stacks (bytes), and of the
	// number of goroutines, in this process.
	heapPerWait, stackPerWait, goroutinesPerWait float64
	// CPU time per wait (µs) from the release to the last answer: this process (the primary)
	// and the child (the clients).
	cpuPerWait, clientCPUPerWait float64
	failure                      string
}

func waitsRound(ctx context.Context, b *bench, n int, gate string) (waitsResult, error) {
	var res waitsResult
	r, err := startRig(ctx, b.cfg, false)
	if err != nil {
		return res, err
	}
	defer r.stop()
	debug.FreeOSMemory()
	res.rssBefore = rssMiB()
	heapBefore, stackBefore, goBefore := goMemory()

	// Admit n gate calls, 64 per response.
	job := waitersJob{Origin: r.agentCLIURL, Wait: "30", Parallel: 128, Calls: make([]waitCall, n)}
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
				job.Calls[i] = waitCall{Token: sh.token, Window: sh.window, CallID: id}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return res, err
	}

	cmd := exec.CommandContext(ctx, b.cfg.Self, waitersCommand)
	cmd.Env = []string{}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return res, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	if err := cmd.Start(); err != nil {
		return res, err
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if err := json.NewEncoder(stdin).Encode(job); err != nil {
		return res, err
	}
	stdin.Close()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 64<<20)
	if !lines.Scan() || lines.Text() != "sent" {
		return res, fmt.Errorf("waiters: expected \"sent\", got %q (%v)", lines.Text(), lines.Err())
	}
	sleep(ctx, settle(b))
	res.rssParked = rssMiB()
	heapParked, stackParked, goParked := goMemory()
	res.heapPerWait = (heapParked - heapBefore) / float64(n)
	res.stackPerWait = (stackParked - stackBefore) / float64(n)
	res.goroutinesPerWait = float64(goParked-goBefore) / float64(n)
	b.heapProfile("waits")
	cpuReleased := processCPU()
	released := time.Now().UnixNano()
	r.p.TestToolkit.Release(gate)
	if !lines.Scan() {
		return res, fmt.Errorf("waiters: no result (%v)", lines.Err())
	}
	res.cpuPerWait = float64(processCPU()-cpuReleased) / float64(time.Microsecond) / float64(n)
	var out waitersOutput
	if err := json.Unmarshal(lines.Bytes(), &out); err != nil {
		return res, fmt.Errorf("waiters: %w", err)
	}
	res.clientCPUPerWait = float64(out.CPUNanos) / 1e3 / float64(n)
	for _, at := range out.Arrivals {
		d := float64(at-released) / 1e6
		if d < 0 {
			res.early++
			continue
		}
		res.latencies = append(res.latencies, d)
		res.worst = max(res.worst, d)
	}
	if out.Failures > 0 {
		res.failure = fmt.Sprintf("%d waits failed, first: %s", out.Failures, out.FirstError)
	}
	return res, nil
}

// settle is the pause between the child having written every request and the release, so the
// requests are parked in the primary by then.
func settle(b *bench) time.Duration {
	if b.cfg.Smoke {
		return 200 * time.Millisecond
	}
	return time.Second
}

// goMemory is this process's Go heap in use and goroutine stack memory in use (bytes), and its
// number of goroutines.
func goMemory() (heap, stacks float64, goroutines int) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse), float64(ms.StackInuse), runtime.NumGoroutine()
}

// raiseNoFile raises this process's RLIMIT_NOFILE soft limit to the hard limit.
func raiseNoFile() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, err
		}
	}
	return lim.Cur, nil
}

// rssMiB is this process's resident set size (VmRSS) in MiB.
func rssMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
