package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// waitersRun is what one run of the waiters child gave.
type waitersRun struct {
	out      waitersOutput
	released int64         // Unix ns of the release
	cpu      time.Duration // this process's CPU from the release to the last answer
}

// runWaiters starts the waiters child on job and waits until it has written every request;
// after the settling pause it calls parked (to read what is measured with the waits parked),
// notes the time and calls release; then it waits for the child's answers.
func runWaiters(ctx context.Context, b *bench, job waitersJob, parked, release func()) (waitersRun, error) {
	var run waitersRun
	cmd := exec.CommandContext(ctx, b.cfg.Self, waitersCommand)
	cmd.Env = []string{}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return run, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return run, err
	}
	if err := cmd.Start(); err != nil {
		return run, err
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if err := json.NewEncoder(stdin).Encode(job); err != nil {
		return run, err
	}
	stdin.Close()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 64<<20)
	if !lines.Scan() || lines.Text() != "sent" {
		return run, fmt.Errorf("waiters: expected \"sent\", got %q (%v)", lines.Text(), lines.Err())
	}
	sleep(ctx, settle(b))
	parked()
	cpuReleased := processCPU()
	run.released = time.Now().UnixNano()
	release()
	if !lines.Scan() {
		return run, fmt.Errorf("waiters: no result (%v)", lines.Err())
	}
	run.cpu = processCPU() - cpuReleased
	if err := json.Unmarshal(lines.Bytes(), &run.out); err != nil {
		return run, fmt.Errorf("waiters: %w", err)
	}
	return run, nil
}

// afterRelease is each completed wait's latency from the release (ms), the slowest of them, and
// how many were answered before the release (not parked).
func (run waitersRun) afterRelease() (latencies []float64, worst float64, early int) {
	for _, at := range run.out.Arrivals {
		d := float64(at-run.released) / 1e6
		if d < 0 {
			early++
			continue
		}
		latencies = append(latencies, d)
		worst = max(worst, d)
	}
	return latencies, worst, early
}

// failure describes the waits that failed, or is "".
func (run waitersRun) failure() string {
	if run.out.Failures == 0 {
		return ""
	}
	return fmt.Sprintf("%d waits failed, first: %s", run.out.Failures, run.out.FirstError)
}

// settle is the pause between the child having written every request and the release, so the
// requests are parked in the server by then.
func settle(b *bench) time.Duration {
	if b.cfg.Smoke {
		return 200 * time.Millisecond
	}
	return time.Second
}
