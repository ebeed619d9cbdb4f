package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/store"
)

var _ WorkerSink = (*Manager)(nil)

// reportSaveTimeout bounds a write that must be saved after the connection that reported it
// ended (see beyondConnection).
const reportSaveTimeout = 30 * time.Second

// beyondConnection returns the context of a write that records what a worker reported and
// must not be lost when the worker's connection (ctx) ends meanwhile: a job's result, or that
// its worker no longer holds it. Left undone, a worker that never comes back would leave the
// job running until the sweep gives it up as unknown. It keeps ctx's values but not its
// cancellation, and is bounded so a stuck store cannot hold the worker's reports forever.
func beyondConnection(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), reportSaveTimeout)
}

// startRemote sends a recorded, tracked job to a worker of its key. Its output is mirrored into
// the job's log here as the worker reports it; the worker enforces the ceiling.
func (m *Manager) startRemote(ctx context.Context, t *tracked, spec JobSpec) {
	rec := t.rec
	traceparent, tracestate := telemetry.Inject(ctx)
	workerID, err := m.cfg.Workers.StartJob(ctx, rec.WorkerKey, spec.Binding, WorkerJob{
		ID: rec.ID, Agent: rec.Agent, Command: rec.Command, Ceiling: rec.Ceiling, Grace: m.cfg.Settings.Grace,
		AgentCLIEnv: spec.AgentCLIEnv, ExtraEnv: spec.ExtraEnv, Traceparent: traceparent, Tracestate: tracestate,
	})
	if err != nil {
		m.log.Warn("worker job could not start", "job", rec.ID, "worker_key", rec.WorkerKey, "err", err)
		m.untrack(rec.ID)
		m.finish(ctx, rec, store.JobResult{Outcome: outcomeCouldNotStart + ": " + err.Error()}, t)
		return
	}
	m.setWorker(ctx, t, workerID)
	m.log.Info("job started on a worker", "job", rec.ID, "worker", workerID)
}

// setWorker records the worker now holding a tracked job.
func (m *Manager) setWorker(ctx context.Context, t *tracked, workerID string) {
	m.mu.Lock()
	t.rec.WorkerID = workerID
	m.mu.Unlock()
	if err := m.cfg.Store.SetJobWorker(ctx, t.rec.ID, workerID); err != nil {
		m.log.Error("job worker not recorded", "job", t.rec.ID, "worker", workerID, "err", err)
	}
}

func (m *Manager) workerOf(t *tracked) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return t.rec.WorkerID
}

// record is a copy of a tracked job's record.
func (m *Manager) record(t *tracked) store.Job {
	m.mu.Lock()
	defer m.mu.Unlock()
	return t.rec
}

// awaitedFrom returns the tracked job when workerID may report it: the worker recorded for
// it, or any worker while none is recorded yet (a report can overtake StartJob's return), which
// is then recorded under ctx.
func (m *Manager) awaitedFrom(ctx context.Context, workerID string, jobID int64) *tracked {
	t := m.tracked(jobID)
	if t == nil || t.rec.WorkerKey == "" {
		return nil
	}
	switch w := m.workerOf(t); w {
	case workerID:
		return t
	case "":
		m.setWorker(ctx, t, workerID)
		return t
	default:
		return nil
	}
}

// cancelRemote asks the job's worker to stop it; while the worker is away the request is
// saved and sent when the worker reports the job again.
func (m *Manager) cancelRemote(ctx context.Context, t *tracked) error {
	if workerID := m.workerOf(t); workerID != "" && m.cfg.Workers.CancelJob(workerID, t.rec.ID) == nil {
		return nil
	}
	return m.requestCancel(ctx, t.rec.ID)
}

func (m *Manager) requestCancel(ctx context.Context, id int64) error {
	if err := m.cfg.Store.RequestJobCancel(ctx, id); err != nil {
		return fmt.Errorf("%w: job %d: %w", ErrNotRunning, id, err)
	}
	m.log.Info("job cancel saved until its worker is back", "job", id)
	return nil
}

// WorkerJobs implements WorkerSink: a worker connected holding these jobs. Running
// ones are re-attached (their output resumes where this primary's mirror ends); finished ones
// are saved and acknowledged; a job this primary recorded on that worker that it no longer
// holds finishes as unknown.
//
// Its reads and re-attachments run under the connection's ctx: once that connection ends they
// are moot, and the worker's next connection reports its jobs again. What it finishes is saved
// beyond the connection.
func (m *Manager) WorkerJobs(ctx context.Context, workerKey, workerID string, states []WorkerJobState) {
	held := make(map[int64]bool, len(states))
	for _, st := range states {
		held[st.ID] = true
		rec, err := m.cfg.Store.Job(ctx, st.ID)
		switch {
		case errors.Is(err, store.ErrNotFound) || (err == nil && rec.WorkerKey != workerKey):
			m.log.Warn("worker reported a job this primary does not know; stopping it", "job", st.ID, "worker", workerID)
			if st.Running {
				_ = m.cfg.Workers.CancelJob(workerID, st.ID)
			} else {
				_ = m.cfg.Workers.AckJob(workerID, st.ID)
			}
			continue
		case err != nil && ctx.Err() != nil:
			return // the connection ended; the worker reports its jobs again when it is back
		case err != nil:
			m.log.Error("worker job lookup failed", "job", st.ID, "err", err)
			continue
		case rec.Status != store.JobRunning:
			// Finished here already (interrupted, or unknown): nothing may still run for it.
			// It is forgotten once it reports its end (see JobFinished).
			if st.Running {
				_ = m.cfg.Workers.CancelJob(workerID, st.ID)
			} else {
				_ = m.cfg.Workers.AckJob(workerID, st.ID)
			}
			continue
		}
		t := m.tracked(rec.ID)
		if t == nil {
			if rec.Kind == "agent" && st.Running {
				// Its response died with the previous primary: it can no longer reach its
				// tools, so it is stopped and recorded as interrupted, never replayed. (One
				// that finished meanwhile is finished normally below, with its report.)
				_ = m.cfg.Workers.CancelJob(workerID, rec.ID)
				saveCtx, cancel := beyondConnection(ctx)
				m.finishRemote(saveCtx, workerID, rec, store.JobResult{Outcome: OutcomeInterrupted}, nil)
				cancel()
				continue
			}
			t = &tracked{rec: rec, cancel: make(chan struct{}), deadline: rec.CreatedAt.Add(rec.Ceiling)}
			if !m.track(t) {
				return
			}
		}
		if rec.WorkerID != workerID {
			m.setWorker(ctx, t, workerID)
		}
		// Running or finished, the output resumes where the mirror ends; a finished job's
		// JobFinished follows the rest of its log, so its tail and report are complete.
		if err := m.cfg.Workers.AttachJob(workerID, rec.ID, logSize(rec.LogPath)); err != nil {
			m.log.Warn("worker job not re-attached", "job", rec.ID, "err", err)
			if !st.Running {
				m.JobFinished(ctx, workerID, rec.ID, st.Exit)
			}
		}
		if st.Running && rec.CancelRequested { // asked for while the worker was away
			_ = m.cfg.Workers.CancelJob(workerID, rec.ID)
		}
	}
	recs, err := m.cfg.Store.ListJobs(ctx, store.JobRunning)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Error("list running jobs", "err", err)
		}
		return
	}
	for _, rec := range recs {
		if rec.WorkerKey == workerKey && rec.WorkerID == workerID && !held[rec.ID] {
			m.log.Warn("worker no longer holds a job; its outcome is unknown", "job", rec.ID, "worker", workerID)
			m.untrack(rec.ID)
			saveCtx, cancel := beyondConnection(ctx)
			m.finish(saveCtx, rec, store.JobResult{Outcome: OutcomeUnknown}, nil)
			cancel()
		}
	}
}

// JobStarted implements WorkerSink.
func (m *Manager) JobStarted(_ context.Context, workerID string, jobID int64) {
	m.log.Debug("worker started job", "job", jobID, "worker", workerID)
}

// JobOutput implements WorkerSink: the bytes are written into the mirror at their
// offset, so a chunk sent twice after a reconnect lands in the same place.
func (m *Manager) JobOutput(ctx context.Context, workerID string, jobID int64, offset int64, data []byte) {
	t := m.awaitedFrom(ctx, workerID, jobID)
	if t == nil || offset < 0 || offset+int64(len(data)) > m.cfg.MaxLogBytes {
		return
	}
	f, err := os.OpenFile(m.record(t).LogPath, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		m.log.Error("job log mirror", "job", jobID, "err", err)
		return
	}
	defer f.Close()
	if _, err := f.WriteAt(data, offset); err != nil {
		m.log.Error("job log mirror", "job", jobID, "err", err)
	}
}

// JobFinished implements WorkerSink: the result is saved with its continuation, then
// the worker is told it may forget the job. The result is saved even when the connection
// (ctx) ends meanwhile: the worker reports it again only if it comes back.
func (m *Manager) JobFinished(ctx context.Context, workerID string, jobID int64, exit WorkerJobExit) {
	ctx, cancel := beyondConnection(ctx)
	defer cancel()
	t := m.awaitedFrom(ctx, workerID, jobID)
	if t == nil {
		// A job this primary stopped awaiting (saved already, or never known): the worker may
		// forget it. One still awaited from another worker is left alone.
		if rec, err := m.cfg.Store.Job(ctx, jobID); errors.Is(err, store.ErrNotFound) ||
			(err == nil && rec.Status != store.JobRunning) {
			_ = m.cfg.Workers.AckJob(workerID, jobID)
		}
		return
	}
	res := store.JobResult{}
	if exit.StartError != "" {
		res.Outcome = outcomeCouldNotStart + ": " + exit.StartError
	} else {
		e := jobproc.Exit{Code: exit.Code, Known: exit.CodeKnown, TimedOut: exit.TimedOut, Cancelled: exit.Cancelled, OutputLimit: exit.OutputLimit}
		res.Outcome = classify(e)
		if e.Known {
			code := e.Code
			res.ExitCode = &code
		}
	}
	m.finishRemote(ctx, workerID, m.record(t), res, t)
}

func (m *Manager) finishRemote(ctx context.Context, workerID string, rec store.Job, res store.JobResult, t *tracked) {
	if m.finish(ctx, rec, res, t) {
		m.untrack(rec.ID)
		if err := m.cfg.Workers.AckJob(workerID, rec.ID); err != nil {
			m.log.Debug("job ack not sent; the worker reports it again", "job", rec.ID, "err", err)
		}
	}
}

func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// sweepLostWorkerJobs finishes as unknown every worker job still running well past its
// ceiling: its worker would have stopped it at the ceiling and reported it, so that worker is
// gone (or has lost the job) and the job's place under the caps is freed.
func (m *Manager) sweepLostWorkerJobs(ctx context.Context) {
	recs, err := m.cfg.Store.ListJobs(ctx, store.JobRunning)
	if err != nil {
		m.log.Error("list running jobs", "err", err)
		return
	}
	now := m.cfg.Clock.Now()
	for _, rec := range recs {
		if rec.WorkerKey == "" {
			continue
		}
		if m.unreportedAgent(rec, now) {
			m.log.Warn("worker agent not reported after the restart; interrupted", "job", rec.ID, "worker", rec.WorkerID)
			m.finish(ctx, rec, store.JobResult{Outcome: OutcomeInterrupted}, m.untrack(rec.ID))
			continue
		}
		if now.Before(rec.CreatedAt.Add(rec.Ceiling + m.cfg.Settings.Grace + m.cfg.LostWorkerAfter)) {
			continue
		}
		m.log.Warn("worker job never reported after its ceiling; its outcome is unknown", "job", rec.ID, "worker", rec.WorkerID)
		t := m.untrack(rec.ID)
		m.finish(ctx, rec, store.JobResult{Outcome: OutcomeUnknown}, t)
	}
}

// unreportedAgent reports whether rec is a background agent an earlier primary started on a
// worker that has not reported it within AgentReportGrace of this primary's start. A report
// tracks the job (or finishes it), so an untracked one was never reported. Its response died
// with the earlier primary, so it could not reach its tools: it is interrupted at once rather
// than holding its cap places until its week-long ceiling.
func (m *Manager) unreportedAgent(rec store.Job, now time.Time) bool {
	return rec.Kind == "agent" && rec.CreatedAt.Before(m.started) &&
		!now.Before(m.started.Add(m.cfg.Settings.AgentReportGrace)) && m.tracked(rec.ID) == nil
}

// sweep runs sweepLostWorkerJobs every SweepEvery until the manager closes.
func (m *Manager) sweep() {
	tick, ticks := m.cfg.Clock.NewTicker(m.cfg.SweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-ticks:
			// The sweep is this manager's own round, on behalf of no caller and no connection:
			// there is no context to inherit, and a round under way completes its writes.
			m.sweepLostWorkerJobs(context.Background())
		}
	}
}
