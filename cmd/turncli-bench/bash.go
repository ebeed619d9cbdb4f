package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

// measureBash times RunBash of `true` through ResponseService (the runtime's gRPC call over
// loopback TCP, from the request until the result arrives) in a primary-local response and in a
// worker-keyed one, beside the floor: `bash -c true` started directly by this process with an
// empty environment. Interleaved as in measureProcess; each round's value is the median.
func measureBash(ctx context.Context, b *bench) ([]row, error) {
	r, err := startRig(ctx, b.cfg, true)
	if err != nil {
		return nil, err
	}
	defer r.stop()
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		return nil, err
	}
	var ids [2]string
	for i, key := range []string{"", workerKey} {
		resp, err := r.runtime.OpenResponse(ctx, &responsev1.OpenResponseRequest{
			AgentName: "bench", RequesterId: "@bench:example.org",
			Conversation: &conversationv1.Conversation{Channel: "!bench:example.org", Thread: "$bench"},
			ShellMode:    responsev1.ShellMode_SHELL_MODE_MINIMAL, WorkerKey: key,
		})
		if err != nil {
			return nil, fmt.Errorf("OpenResponse: %w", err)
		}
		ids[i] = resp.GetResponseId()
	}
	seq := 0
	runBash := func(i int) (time.Duration, error) {
		seq++
		start := time.Now()
		result, err := runBash(ctx, r.runtime, &responsev1.RunBashRequest{ResponseId: ids[i], BashCallId: fmt.Sprint("bash-", seq), Command: "true"}, nil)
		if err != nil {
			return 0, err
		}
		d := time.Since(start)
		if !succeeded(result) {
			return 0, fmt.Errorf("RunBash of true: %v", result)
		}
		return d, nil
	}
	floor := func() (time.Duration, error) {
		cmd := exec.CommandContext(ctx, bashPath, "-c", "true")
		cmd.Env = []string{}
		start := time.Now()
		err := cmd.Run()
		return time.Since(start), err
	}
	for i := range 2 { // warm up, uncounted
		if _, err := runBash(i); err != nil {
			return nil, err
		}
	}
	if _, err := floor(); err != nil {
		return nil, err
	}

	s := b.cfg.scale
	var local, worker, floors []float64
	for round := 0; round < s.rounds; round++ {
		var l, w, f []float64
		for n := 0; n < s.processRuns; n++ {
			for k := 0; k < 3; k++ {
				var d time.Duration
				which := (n + k) % 3
				if which == 2 {
					d, err = floor()
				} else {
					d, err = runBash(which)
				}
				if err != nil {
					return nil, err
				}
				switch which {
				case 0:
					l = append(l, ms(d))
				case 1:
					w = append(w, ms(d))
				case 2:
					f = append(f, ms(d))
				}
			}
		}
		local, worker, floors = append(local, median(l)), append(worker, median(w)), append(floors, median(f))
	}
	fl := median(floors)
	return []row{
		{key: "bash-local", measure: "RunBash `true` via ResponseService, primary-local", unit: millis,
			value: median(local), floor: fl, rounds: local, floors: floors, ratios: ratios(local, floors),
			target: target{kind: ratioAtMost, limit: 1.5, text: "≤ 1.5× `bash -c true`"}},
		{key: "bash-worker", measure: "RunBash `true` via ResponseService, on a worker", unit: millis,
			value: median(worker), floor: fl, rounds: worker, floors: floors, ratios: ratios(worker, floors),
			target: target{kind: ratioAtMost, limit: 2, text: "≤ 2× `bash -c true`"}},
	}, nil
}
