package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/turncli/turncli/primary/store"
)

// A parked agent job (see engine.go) has no process until people decide what its engine
// waits for. Then its owner (the interaction engine) takes the parking off (store.UnparkJob)
// and resumes it here: the same job, its log continued, a new process with a new ceiling.

// Resume starts the next run of rec, an unparked local agent job, as spec says (its
// environment, OnEnd and Park; the command is the job's own). A run that cannot start
// finishes the job as "could not start", with its continuation; Resume then returns nil.
func (m *Manager) Resume(ctx context.Context, rec store.Job, spec JobSpec) error {
	if rec.WorkerKey != "" || rec.Engine == "" {
		return fmt.Errorf("%w: only a local engine job resumes", ErrInvalid)
	}
	// The previous run's files would name its process and its exit.
	for _, p := range []string{m.statusPath(rec.ID), m.identityPath(rec.ID)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("jobs: clear the previous run of job %d: %w", rec.ID, err)
		}
	}
	rec.Pid, rec.ProcStart, rec.Parking = 0, 0, nil
	t := &tracked{rec: rec, cancel: make(chan struct{}), secrets: spec.Secrets, onEnd: spec.OnEnd, park: spec.Park,
		deadline: m.cfg.Clock.Now().Add(rec.Ceiling), logStart: logSize(rec.LogPath)}
	ctx = context.WithoutCancel(ctx)
	if !m.track(t) {
		m.finish(ctx, rec, store.JobResult{Outcome: outcomeCouldNotStart + ": the primary is shutting down"}, t)
		return nil
	}
	m.log.Info("parked agent job resumed", "job", rec.ID)
	m.publish("job.resumed", rec)
	m.startLocal(ctx, t, withTrace(ctx, spec.Env))
	return nil
}

// finishParked ends a parked job without running it again (cancelled, or its run cannot
// resume), with its continuation.
func (m *Manager) finishParked(ctx context.Context, rec store.Job, res store.JobResult) error {
	if res.Tail == "" {
		res.Tail = m.engineTail(rec.LogPath, nil)
	}
	res.Run = rec.Run
	j := Job{Job: rec, Runtime: max(m.cfg.Clock.Now().Sub(rec.CreatedAt), 0)}
	j.JobResult = res
	finished, created, err := m.cfg.Store.FinishParkedJob(ctx, rec.ID, res, store.NewContinuation{
		IdempotencyKey: ReportKey(rec.ID), Channel: rec.Channel, Thread: rec.Thread,
		Text: m.redact(continuationText(j, ""), nil),
	})
	if err != nil {
		return err
	}
	m.log.Info("parked job finished", "job", rec.ID, "outcome", res.Outcome, "saved", finished)
	if finished {
		m.finished.Add(1)
		rec.Status, rec.JobResult, rec.Parking = store.JobFinished, res, nil
		m.publish("job.finished", rec)
	}
	if created {
		m.cfg.Notify()
	}
	return nil
}

// GiveUp finishes an unparked job whose next run could not be set up, saying why.
func (m *Manager) GiveUp(ctx context.Context, rec store.Job, why string) {
	rec.Parking = nil
	m.finish(context.WithoutCancel(ctx), rec, store.JobResult{Outcome: outcomeCouldNotStart + ": " + why}, nil)
}
