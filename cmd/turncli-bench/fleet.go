package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

// The fleet's shape: worker keys, the capacities its workers cycle through, and the key of the
// single worker the fleet's latency is compared with.
var (
	fleetKeys       = []string{"fleet-a", "fleet-b", "fleet-c", "fleet-d"}
	fleetCapacities = []int{1, 2, 4, 8}
)

const (
	// fleetAgent is the agent of every command and job: its workspace on a worker is
	// <state>/workspaces/<fleetAgent>.
	fleetAgent   = "bench"
	soloKey      = "solo"
	soloCapacity = 16
	// fleetConcurrency is how many RunBash run at once in either phase: within the solo
	// worker's capacity, and a quarter of it per fleet key, so no command finds its key full.
	fleetConcurrency = 16
)

// fleetConversation is where the fleet's commands run; each background job of the reconnect
// phase has a thread of its own (a thread runs at most 3 jobs), in admin mode so that
// run_in_background starts at once for the requester "admin", whom the runtime vouches for.
var fleetConversation = &conversationv1.Conversation{Channel: "!fleet:example.org", Thread: "$fleet"}

// measureFleet runs a fleet on this machine: one mindroom-primary process and many
// mindroom-worker processes of several keys and capacities, all real, on loopback.
//
//   - Placement: many responses, one command each, spread over the keys; each command prints
//     its working directory, which names the worker it ran on.
//   - Latency: the same number of RunBash, as many at once, on the fleet and on a single worker
//     (the floor), interleaved in batches so both see the same machine.
//   - Reconnect storm: background jobs running on the workers, the primary stopped (SIGTERM,
//     then SIGKILL) and started again on the same state directory and ports; timed until every
//     worker is connected again and every job is reported running by its worker, then every
//     job must finish normally.
func measureFleet(ctx context.Context, b *bench) ([]row, error) {
	sc := b.cfg.scale
	dir, err := os.MkdirTemp("", "turncli-fleet-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// Run as root, the workers' shells run as nobody, who must pass through to their workspaces.
	if err := os.Chmod(dir, 0o711); err != nil {
		return nil, err
	}
	p, err := newFleetPrimary(b.cfg.PrimaryBinary, dir, append(append([]string{}, fleetKeys...), soloKey))
	if err != nil {
		return nil, err
	}
	defer p.close()
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	f, err := startFleet(ctx, b, p, dir, sc.fleetWorkers)
	if err != nil {
		return nil, err
	}
	defer f.stop()

	b.progress("fleet: %d workers connected in %v; %d commands on the fleet and as many on one worker", len(f.workers)-1, f.connectedIn.Round(time.Millisecond), sc.fleetResponses)
	fleetLat, soloLat, ranOn, err := fleetLatency(ctx, p, sc.fleetResponses)
	if err != nil {
		return nil, err
	}
	placement := f.placement(ranOn)

	b.progress("fleet: %d background jobs, then the primary restarts after SIGTERM and after SIGKILL", sc.fleetJobs)
	storm, err := reconnectStorm(ctx, p, f, sc.fleetJobs)
	if err != nil {
		return nil, err
	}

	n := len(f.workers) - 1
	rows := []row{{
		key: "fleet-p99", measure: fmt.Sprintf("RunBash p99 on a fleet of %d worker processes (%d keys, capacities 1–8), %d at once", n, len(fleetKeys), fleetConcurrency),
		unit: millis, value: quantile(fleetLat, 0.99), floor: quantile(soloLat, 0.99),
		target: target{kind: recordedValue, text: "recorded"},
		note: fmt.Sprintf("%d commands each; p50 %.1f ms on the fleet, %.1f ms on one worker (capacity %d); the floor is one worker process with the same load",
			len(fleetLat), quantile(fleetLat, 0.5), quantile(soloLat, 0.5), soloCapacity),
	}, placementRow(placement, n)}
	rows = append(rows, storm.rows(len(f.workers))...)
	return rows, nil
}

// fleet is the running worker processes; the last one is the solo worker.
type fleet struct {
	workers     []*fleetWorker
	byDir       map[string]*fleetWorker // state directory → worker
	connectedIn time.Duration
}

func startFleet(ctx context.Context, b *bench, p *fleetPrimary, dir string, n int) (*fleet, error) {
	f := &fleet{byDir: map[string]*fleetWorker{}}
	start := time.Now()
	add := func(id, key string, capacity int) error {
		w, err := startFleetWorker(b.cfg, p, filepath.Join(dir, id), id, key, capacity)
		if err != nil {
			f.stop()
			return err
		}
		f.workers = append(f.workers, w)
		f.byDir[filepath.Join(dir, id, "state")] = w
		return nil
	}
	for i := range n {
		if err := add(fmt.Sprintf("w%02d", i), fleetKeys[i%len(fleetKeys)], fleetCapacities[(i/len(fleetKeys))%len(fleetCapacities)]); err != nil {
			return nil, err
		}
	}
	if err := add("solo", soloKey, soloCapacity); err != nil {
		return nil, err
	}
	back, _, err := awaitWorkers(ctx, p, f, nil, start, time.Minute)
	if err != nil {
		f.stop()
		return nil, err
	}
	f.connectedIn = back
	return f, nil
}

func (f *fleet) stop() {
	var wg sync.WaitGroup
	for _, w := range f.workers {
		wg.Go(w.stop)
	}
	wg.Wait()
}

// awaitWorkers polls the primary until every worker of f is connected and every job in jobs
// is reported running by a worker; it returns how long after since each of the two was true.
func awaitWorkers(ctx context.Context, p *fleetPrimary, f *fleet, jobs map[int64]bool, since time.Time, limit time.Duration) (workersBack, jobsBack time.Duration, err error) {
	for {
		got, err := p.connected(ctx)
		if err == nil {
			if workersBack == 0 && len(got) == len(f.workers) {
				workersBack = time.Since(since)
			}
			reported := 0
			for _, ids := range got {
				for _, id := range ids {
					if jobs[id] {
						reported++
					}
				}
			}
			if workersBack != 0 && reported == len(jobs) {
				return workersBack, time.Since(since), nil
			}
		}
		if time.Since(since) > limit {
			return 0, 0, fmt.Errorf("after %v: %d of %d workers connected (%v)", limit, len(got), len(f.workers), err)
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// fleetCommand calls a tool through the worker's proxy, then prints the workspace it ran in,
// which lies in its worker's state directory.
const fleetCommand = `mindroom-agent tools call test.echo '{}' >/dev/null && pwd`

// fleetLatency runs n commands on the fleet's keys and n on the solo worker, fleetConcurrency at
// once, in interleaved batches; it returns both sets of latencies (ms) and, for each fleet
// command, the directory it ran in.
func fleetLatency(ctx context.Context, p *fleetPrimary, n int) (fleetLat, soloLat []float64, ranOn []string, err error) {
	batch := max(fleetConcurrency*2, n/10)
	var mu sync.Mutex
	run := func(keys []string, count, offset int, lat *[]float64, dirs *[]string) error {
		sem := make(chan struct{}, fleetConcurrency)
		errs := make(chan error, count)
		var wg sync.WaitGroup
		for i := range count {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				d, out, err := runOnce(ctx, p, keys[(offset+i)%len(keys)], fleetConversation, fleetCommand)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				*lat = append(*lat, ms(d))
				if dirs != nil {
					*dirs = append(*dirs, strings.TrimSpace(out))
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	// Warm up both, uncounted: the first command of a worker installs its launcher.
	var warm []float64
	if err := run(fleetKeys, 2*fleetConcurrency, 0, &warm, nil); err != nil {
		return nil, nil, nil, err
	}
	if err := run([]string{soloKey}, fleetConcurrency, 0, &warm, nil); err != nil {
		return nil, nil, nil, err
	}
	for done := 0; done < n; done += batch {
		count := min(batch, n-done)
		if err := run(fleetKeys, count, done, &fleetLat, &ranOn); err != nil {
			return nil, nil, nil, err
		}
		if err := run([]string{soloKey}, count, done, &soloLat, nil); err != nil {
			return nil, nil, nil, err
		}
	}
	return fleetLat, soloLat, ranOn, nil
}

// runOnce opens a response on key, runs command in it and closes it; it returns how long the
// RunBash took and the command's output.
func runOnce(ctx context.Context, p *fleetPrimary, key string, conv *conversationv1.Conversation, command string) (time.Duration, string, error) {
	rctx := p.asRuntime(ctx)
	resp, err := p.runtime.OpenResponse(rctx, &responsev1.OpenResponseRequest{
		AgentName: fleetAgent, RequesterId: "admin", Conversation: conv, Flags: []string{"requester_trusted"},
		ShellMode: responsev1.ShellMode_SHELL_MODE_MINIMAL, WorkerKey: key,
	})
	if err != nil {
		return 0, "", fmt.Errorf("OpenResponse: %w", err)
	}
	defer func() {
		_, _ = p.runtime.CloseResponse(rctx, &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
	}()
	start := time.Now()
	var out strings.Builder
	result, err := runBash(rctx, p.runtime, &responsev1.RunBashRequest{ResponseId: resp.GetResponseId(), BashCallId: "fleet", Command: command},
		func(c *responsev1.OutputChunk) {
			if c.GetStream() == responsev1.OutputStream_OUTPUT_STREAM_STDOUT {
				out.Write(c.GetData())
			}
		})
	if err != nil {
		return 0, "", err
	}
	d := time.Since(start)
	if !succeeded(result) {
		return 0, "", fmt.Errorf("RunBash on %s: %s (output %q)", key, outcome(result), lastLines(out.String(), 5))
	}
	return d, out.String(), nil
}

// placement counts the commands each worker ran, from the workspace each printed.
func (f *fleet) placement(ranOn []string) placementStats {
	count := map[*fleetWorker]int{}
	for _, d := range ranOn {
		for stateDir, w := range f.byDir {
			if strings.HasPrefix(d, stateDir+string(filepath.Separator)) {
				count[w]++
			}
		}
	}
	var placed []placedWorker
	for _, w := range f.workers {
		placed = append(placed, placedWorker{key: w.key, capacity: w.capacity, commands: count[w]})
	}
	return placementOf(fleetKeys, placed)
}
