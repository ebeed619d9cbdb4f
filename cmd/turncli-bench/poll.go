package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/turncli/turncli/primary"
)

// measurePoll times pollclient — a stand-in for clients that poll every 0.2 s rather than
// long-poll, as MindRoom's own Python client does — calling the fast test.echo against the
// primary's loopback listener, beside the floor of the same process stopping after its POST
// (POLL_ONCE=1): its own start plus one request. With the fast-call budget the POST answers
// the terminal receipt, so the two should match; the note gives the same client against a
// primary whose budget is off, where every call costs at least one poll interval more.
func measurePoll(ctx context.Context, b *bench) ([]row, error) {
	r, err := startRig(ctx, b.cfg, false)
	if err != nil {
		return nil, err
	}
	defer r.stop()
	poller := newPoller(ctx, b.cfg.PollClient, r)
	if _, err := poller.run(false); err != nil { // warm-up, uncounted
		return nil, err
	}
	s := b.cfg.scale
	calls, floors := make([]float64, 0, s.rounds), make([]float64, 0, s.rounds)
	for round := 0; round < s.rounds; round++ {
		var c, f []float64
		for n := 0; n < s.processRuns; n++ {
			for k := 0; k < 2; k++ {
				once := (n+k)%2 == 1 // alternate which goes first
				run, err := poller.run(once)
				if err != nil {
					return nil, err
				}
				if once {
					f = append(f, ms(run.wall))
				} else {
					c = append(c, ms(run.wall))
				}
			}
		}
		calls, floors = append(calls, median(c)), append(floors, median(f))
	}

	off, err := startRig(ctx, b.cfg, false, func(c *primary.Config) { c.Responses.FastCallBudget = -1 })
	if err != nil {
		return nil, err
	}
	defer off.stop()
	slow := newPoller(ctx, b.cfg.PollClient, off)
	var offVals []float64
	for n := 0; n < max(s.processRuns/4, 3); n++ { // each costs a poll interval: fewer runs
		run, err := slow.run(false)
		if err != nil {
			return nil, err
		}
		offVals = append(offVals, ms(run.wall))
	}
	return []row{{
		key: "poll", measure: "polling client (0.2 s interval) calling `test.echo`, whole process", unit: millis,
		value: median(calls), floor: median(floors), rounds: calls, floors: floors, ratios: ratios(calls, floors),
		target: target{kind: ratioAtMost, limit: 1.1, text: "≤ 1.1× its own start + one request"},
		note: fmt.Sprintf("floor: the same process stopping after its POST; against a primary with --fast-call-budget 0 the same call takes %.1f ms (median of %d)",
			median(offVals), len(offVals)),
	}}, nil
}

// poller starts pollclient processes on one rig, opening a fresh response before one fills.
type poller struct {
	ctx  context.Context
	bin  string
	r    *rig
	sh   shell
	used int
}

func newPoller(ctx context.Context, bin string, r *rig) *poller {
	return &poller{ctx: ctx, bin: bin, r: r, used: 1000}
}

func (p *poller) run(once bool) (processRun, error) {
	if p.used == 1000 { // a response holds at most 1024 receipts
		sh, err := p.r.openShell(p.ctx, "")
		if err != nil {
			return processRun{}, err
		}
		p.sh, p.used = sh, 0
	}
	p.used++
	cmd := exec.CommandContext(p.ctx, p.bin)
	cmd.Env = p.sh.env()
	if !once {
		return timeProcess(cmd)
	}
	// The floor stops after its POST whatever it answered: on a loaded machine a call may
	// miss the budget, which costs the measured client a poll, not the floor.
	cmd.Env = append(cmd.Env, "POLL_ONCE=1")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return processRun{}, fmt.Errorf("%s: %v: %s", cmd.Path, err, out)
	}
	return processRun{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}
