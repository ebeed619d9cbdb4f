package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// stormStop is one way the reconnect storm stops the primary.
type stormStop struct {
	signal    syscall.Signal
	name      string
	keySuffix string // of its rows' keys
}

// stormStops are how the reconnect storm stops the primary, in turn: as a supervisor does and
// as a crash does. Jobs outlive either, so the same jobs live through both.
var stormStops = []stormStop{
	{syscall.SIGTERM, "SIGTERM", ""},
	{syscall.SIGKILL, "SIGKILL", "-kill"},
}

// stormResult is what the reconnect storm measured.
type stormResult struct {
	jobs, onWorkers int
	restarts        []stormRestart // one per stormStops
	finishedAfter   time.Duration  // the jobs' release until every one is recorded finished
}

// stormRestart is one stop and start of the primary, timed from the new primary's start.
type stormRestart struct {
	stop                  stormStop
	exited                time.Duration // the signal until the old primary had exited
	ready                 time.Duration // until its /readyz
	workersBack, jobsBack time.Duration
}

func (s stormResult) rows(workers int) []row {
	var rows []row
	for i, r := range s.restarts {
		suffix, how := r.stop.keySuffix, "stopped by "+r.stop.name
		jobs := fmt.Sprintf("the jobs ran on %d workers", s.onWorkers)
		if i == len(s.restarts)-1 {
			jobs += fmt.Sprintf("; all finished with exit 0, %s after they were let go", s.finishedAfter.Round(time.Millisecond))
		}
		rows = append(rows, row{
			key: "fleet-reconnect" + suffix, measure: fmt.Sprintf("reconnect storm: primary %s and started again, all %d workers connected again", how, workers),
			unit: millis, value: ms(r.workersBack),
			target: target{kind: valueAtMost, limit: 10_000, text: "≤ 10 s"},
			note: fmt.Sprintf("from the new primary's start, which was ready (/readyz) after %s; the old one exited %s after the signal, and meanwhile each worker's waits between tries grew towards 5 s (its backoff)",
				r.ready.Round(time.Millisecond), r.exited.Round(time.Millisecond)),
		}, row{
			key: "fleet-reattach" + suffix, measure: fmt.Sprintf("reconnect storm: primary %s, all %d running jobs reported by their workers again", how, s.jobs),
			unit: millis, value: ms(r.jobsBack),
			target: target{kind: valueAtMost, limit: 10_000, text: "≤ 10 s"},
			note:   jobs,
		})
	}
	return rows
}

// jobIDPattern finds the job id in run_in_background's answer.
var jobIDPattern = regexp.MustCompile(`"job_id":(\d+)`)

// reconnectStorm starts jobs background jobs on the fleet's keys, each running until a file
// exists in its workspace, and restarts the primary once per stormStops while they run; then it
// creates the file in every worker's workspace of the agent and waits for every job to finish
// with exit 0. The workspace is the one place outside the job a sandboxed job sees the host
// write to: its /tmp is private and the state directories are hidden.
func reconnectStorm(ctx context.Context, p *fleetPrimary, f *fleet, jobs int) (stormResult, error) {
	res := stormResult{jobs: jobs}
	const release = "release-jobs"
	// A second between checks keeps 20 waiting jobs from loading the machine being measured.
	command := fmt.Sprintf(`mindroom-agent tools call interaction.run_in_background '{"command":"until [ -e %s ]; do sleep 1; done"}'`, release)
	ids := map[int64]bool{}
	for i := range jobs {
		// A thread runs at most 3 jobs; admin mode starts run_in_background without approval.
		conv := &conversationv1.Conversation{Channel: fleetConversation.GetChannel(), Thread: fmt.Sprintf("$job-%d", i)}
		if _, err := p.operator.SetConversationMode(p.asOperator(ctx), &operatorv1.SetConversationModeRequest{
			Conversation: conv, Mode: operatorv1.Mode_MODE_ADMIN}); err != nil {
			return res, fmt.Errorf("SetConversationMode: %w", err)
		}
		_, out, err := runOnce(ctx, p, fleetKeys[i%len(fleetKeys)], conv, command)
		if err != nil {
			return res, err
		}
		m := jobIDPattern.FindStringSubmatch(out)
		if m == nil {
			return res, fmt.Errorf("run_in_background answered %q", out)
		}
		id, _ := strconv.ParseInt(m[1], 10, 64)
		ids[id] = true
	}
	if _, _, err := awaitWorkers(ctx, p, f, ids, time.Now(), 30*time.Second); err != nil {
		return res, fmt.Errorf("before the restarts: %w", err)
	}
	holding, err := p.connected(ctx)
	if err != nil {
		return res, err
	}
	for _, running := range holding {
		for _, id := range running {
			if ids[id] {
				res.onWorkers++
				break
			}
		}
	}
	for _, stop := range stormStops {
		r := stormRestart{stop: stop}
		signalled := time.Now()
		p.stop(stop.signal)
		restarted := time.Now()
		r.exited = restarted.Sub(signalled)
		if err := p.start(ctx); err != nil {
			return res, err
		}
		r.ready = time.Since(restarted)
		if r.workersBack, r.jobsBack, err = awaitWorkers(ctx, p, f, ids, restarted, time.Minute); err != nil {
			return res, fmt.Errorf("after %s: %w", stop.name, err)
		}
		res.restarts = append(res.restarts, r)
	}
	for _, w := range f.workers {
		workspace := filepath.Join(w.dir, "state", "workspaces", fleetAgent)
		if _, err := os.Stat(workspace); err != nil {
			continue // no command of the agent ran there
		}
		if err := os.WriteFile(filepath.Join(workspace, release), nil, 0o644); err != nil {
			return res, err
		}
	}
	released := time.Now()
	for id := range ids {
		for {
			got, err := p.operator.GetJob(p.asOperator(ctx), &operatorv1.GetJobRequest{JobId: uint64(id)})
			if err != nil {
				return res, fmt.Errorf("GetJob %d: %w", id, err)
			}
			job := got.GetJob()
			if job.GetStatus() == operatorv1.JobStatus_JOB_STATUS_FINISHED {
				if job.GetExitCode() != 0 {
					return res, fmt.Errorf("job %d ended %q (exit %d) after the restarts", id, job.GetOutcome(), job.GetExitCode())
				}
				break
			}
			if time.Since(released) > time.Minute {
				return res, fmt.Errorf("job %d still %v a minute after it was let go", id, job.GetStatus())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	res.finishedAfter = time.Since(released)
	return res, nil
}
