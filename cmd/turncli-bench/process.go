package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"time"

	"github.com/turncli/turncli/internal/benchfloor"
)

// measureProcess times `mindroom-agent tools call test.echo '{}'` as a whole process (start,
// POST, long-poll GET, print, exit) against the primary's loopback listener and against a
// worker's sandbox proxy, beside the floor: floorclient making the same two loopback requests to
// the net/http floor. The three run interleaved, one process of each in turn, so load from
// elsewhere falls on all alike; each round's value is the median wall time of its processes.
//
// The processes get only the three Agent CLI variables (floorclient: FLOOR_URL) and are started
// directly, not through a shell or the agent_cli_bin launcher.
//
// A fast call costs mindroom-agent one request against the primary (the POST answers the
// terminal receipt) and two against the floor's server, which answers every POST queued. So a
// fourth process, mindroom-agent against the floor's server making the floor's own two
// requests, isolates the client's own start and per-call work from the primary's; the note
// reports it.
func measureProcess(ctx context.Context, b *bench) ([]row, error) {
	r, err := startRig(ctx, b.cfg, true)
	if err != nil {
		return nil, err
	}
	defer r.stop()
	floorURL, stopFloor, err := serveHTTPFloor()
	if err != nil {
		return nil, err
	}
	defer stopFloor()

	paths := []struct {
		name string
		key  string // worker key of the response ("" local)
		sh   shell
		used int // receipts in the current response
	}{{name: "local"}, {name: "worker", key: workerKey}}
	for i := range paths {
		if paths[i].sh, err = r.openShell(ctx, paths[i].key); err != nil {
			return nil, err
		}
	}
	agent := func(i int) (*exec.Cmd, error) {
		p := &paths[i]
		if p.used == 1000 { // a response holds at most 1024 receipts
			fresh, err := r.openShell(ctx, p.key)
			if err != nil {
				return nil, err
			}
			p.sh, p.used = fresh, 0
		}
		p.used++
		cmd := exec.CommandContext(ctx, b.cfg.AgentBinary, "tools", "call", "test.echo", "{}")
		cmd.Env = p.sh.env()
		return cmd, nil
	}
	clientOnFloor := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, b.cfg.AgentBinary, "tools", "call", "test.echo", "{}")
		cmd.Env = shell{origin: floorURL, token: "floor", window: "floor"}.env()
		return cmd
	}
	floor := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, b.cfg.FloorClient)
		cmd.Env = []string{"FLOOR_URL=" + floorURL}
		return cmd
	}

	// Warm up the page cache, the connections and the primary once, uncounted.
	for i := range paths {
		cmd, err := agent(i)
		if err != nil {
			return nil, err
		}
		if _, err := timeProcess(cmd); err != nil {
			return nil, err
		}
	}
	for _, cmd := range []*exec.Cmd{floor(), clientOnFloor()} {
		if _, err := timeProcess(cmd); err != nil {
			return nil, err
		}
	}

	s := b.cfg.scale
	local, worker, floorVals := make([]float64, 0, s.rounds), make([]float64, 0, s.rounds), make([]float64, 0, s.rounds)
	onFloor := make([]float64, 0, s.rounds)
	var agentCPU, floorCPU, onFloorCPU []float64 // ms of CPU per process
	for round := 0; round < s.rounds; round++ {
		var l, w, f, c []float64
		for n := 0; n < s.processRuns; n++ {
			// Rotate the order so no path always runs right after another.
			for k := 0; k < 4; k++ {
				var cmd *exec.Cmd
				which := (n + k) % 4
				switch which {
				case 2:
					cmd = floor()
				case 3:
					cmd = clientOnFloor()
				default:
					if cmd, err = agent(which); err != nil {
						return nil, err
					}
				}
				run, err := timeProcess(cmd)
				if err != nil {
					return nil, err
				}
				switch which {
				case 0:
					l = append(l, ms(run.wall))
					agentCPU = append(agentCPU, ms(run.cpu))
				case 1:
					w = append(w, ms(run.wall))
				case 2:
					f = append(f, ms(run.wall))
					floorCPU = append(floorCPU, ms(run.cpu))
				case 3:
					c = append(c, ms(run.wall))
					onFloorCPU = append(onFloorCPU, ms(run.cpu))
				}
			}
		}
		local, worker, floorVals = append(local, median(l)), append(worker, median(w)), append(floorVals, median(f))
		onFloor = append(onFloor, median(c))
	}
	fl := median(floorVals)
	return []row{
		{key: "process-local", measure: "`mindroom-agent tools call test.echo '{}'` process, primary-local", unit: millis,
			value: median(local), floor: fl, rounds: local, floors: floorVals, ratios: ratios(local, floorVals),
			target: target{kind: ratioAtMost, limit: 1.1, text: "≤ 1.1×"},
			note: fmt.Sprintf("median wall time of one process; CPU used by the process itself (user+sys, median): mindroom-agent %.2f ms, floorclient %.2f ms; "+
				"the client's own cost: mindroom-agent against the floor's server, making the floor's two requests, %.2f ms (%.2f× the floor, rounds %s), CPU %.2f ms",
				median(agentCPU), median(floorCPU), median(onFloor), median(ratios(onFloor, floorVals)), formatRatios(ratios(onFloor, floorVals)), median(onFloorCPU))},
		{key: "process-worker", measure: "the same through a worker's sandbox proxy", unit: millis,
			value: median(worker), floor: fl, rounds: worker, floors: floorVals, ratios: ratios(worker, floorVals),
			target: target{kind: ratioAtMost, limit: 1.2, text: "≤ 1.2×"}},
	}, nil
}

// processRun is one finished process: its wall time and the CPU time it used itself.
type processRun struct {
	wall, cpu time.Duration
}

// timeProcess runs cmd and returns its wall and CPU time; it must exit 0 having printed a
// completed receipt.
func timeProcess(cmd *exec.Cmd) (processRun, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil || !bytes.Contains(out.Bytes(), completed) {
		return processRun{}, fmt.Errorf("%s: %v: %s", cmd.Path, err, out.Bytes())
	}
	return processRun{wall: d, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}

// serveHTTPFloor serves benchfloor.HTTPHandler on a loopback port; it returns the origin.
func serveHTTPFloor() (string, func(), error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: benchfloor.HTTPHandler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(lis)
	return "http://" + lis.Addr().String(), func() { srv.Close() }, nil
}
