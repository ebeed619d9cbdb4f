package jobs

import (
	"context"
	"syscall"
	"time"

	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/primary/store"
)

// Recover is called once at boot, before Start. For every job recorded running that this
// manager does not hold:
//   - a local job recorded without its process (the previous primary died while launching it)
//     is named by its identity file, waiting up to StartWait for its process to write it; one
//     still unnamed then is given up (its command never runs) and finishes as never started;
//   - a local command job whose process (same pid and start time) is alive is re-attached;
//     one found dead finishes with the exit status its status file recorded, and as "outcome
//     unknown after restart" only when it has none;
//   - a local agent job is interrupted: its response died with the previous primary, so it is
//     stopped (only when it is still the recorded process) and never replayed;
//   - a worker job waits for its worker to report it (see WorkerJobs): a running agent is then
//     interrupted, a finished one delivers its report;
//   - a parked agent job stays parked: it has no process, and its prompt's decision resumes it.
//
// Nothing is re-run, and a pid now naming another process is never signalled.
func (m *Manager) Recover(ctx context.Context) error {
	recs, err := m.cfg.Store.ListJobs(ctx, store.JobRunning)
	if err != nil {
		return err
	}
	// One wait for all: every process launched before the restart has had this long since.
	// It is a wait for a real process, which jobproc.Settle measures by the system clock.
	nameBy := time.Now().Add(m.cfg.StartWait)
	for _, rec := range recs {
		if m.tracked(rec.ID) != nil || rec.Parked() { // a parked job has no process, by design
			continue
		}
		if rec.WorkerKey != "" {
			m.log.Info("worker job awaits its worker", "job", rec.ID, "worker", rec.WorkerID)
			continue
		}
		rec, started := m.identify(ctx, rec, nameBy)
		switch {
		case !started:
			m.log.Info("job given up: the restart came before its process started", "job", rec.ID)
			m.finish(ctx, rec, store.JobResult{Outcome: OutcomeNeverStarted}, nil)
		case rec.Kind == "agent":
			if p := jobproc.Find(rec.Pid, rec.ProcStart, m.statusPath(rec.ID)); p != nil {
				_ = p.Signal(syscall.SIGKILL)
			}
			m.log.Info("agent job interrupted by the restart", "job", rec.ID)
			m.finish(ctx, rec, store.JobResult{Outcome: OutcomeInterrupted}, nil)
		default:
			if p := jobproc.Find(rec.Pid, rec.ProcStart, m.statusPath(rec.ID)); p != nil {
				m.log.Info("job re-attached", "job", rec.ID, "pid", rec.Pid)
				t := &tracked{rec: rec, cancel: make(chan struct{}), deadline: rec.CreatedAt.Add(rec.Ceiling)}
				if m.track(t) {
					m.superviseLocal(t, p)
				}
				continue
			}
			m.log.Info("job found dead after restart", "job", rec.ID, "pid", rec.Pid)
			m.finish(ctx, rec, endedUnwatched(m.statusPath(rec.ID)), nil)
		}
	}
	return nil
}

// identify fills in the process of a local job recorded without one from its identity file
// (see jobproc.Settle), and records it. started is false when the launch was given up: its
// command never runs. A process that cannot be named is left unknown (found dead).
func (m *Manager) identify(ctx context.Context, rec store.Job, nameBy time.Time) (_ store.Job, started bool) {
	if rec.Pid != 0 {
		return rec, true
	}
	id, st, err := jobproc.Settle(m.identityPath(rec.ID), m.cfg.ShellUser, nameBy, m.cfg.Poll)
	switch {
	case err != nil:
		m.log.Error("job's launch could not be settled", "job", rec.ID, "err", err)
		return rec, true
	case st == jobproc.IdentityAbandoned:
		return rec, false
	case st != jobproc.IdentityWritten:
		m.log.Warn("job's identity file is incomplete; its process cannot be found", "job", rec.ID)
		return rec, true
	}
	rec.Pid, rec.ProcStart = id.Pid, id.Start
	if err := m.cfg.Store.SetJobProcess(ctx, rec.ID, rec.Pid, rec.ProcStart); err != nil {
		m.log.Error("job process not recorded", "job", rec.ID, "pid", rec.Pid, "err", err)
	}
	m.log.Info("job's process named by its identity file", "job", rec.ID, "pid", rec.Pid)
	return rec, true
}

// endedUnwatched is the result of a local job whose process ended while no primary watched
// it. Its status file says how its command ended, just as it would have told a watching
// primary (Reap reads the same file first), so the job keeps its real outcome: a primary killed
// between a job's exit and the save of its result must not turn a known result into an
// unknown one. Only without a status file (its wrapper was killed before writing it) is the
// outcome unknown.
func endedUnwatched(statusPath string) store.JobResult {
	code, ok := jobproc.ReadStatus(statusPath)
	if !ok {
		return store.JobResult{Outcome: OutcomeUnknown}
	}
	return store.JobResult{Outcome: classify(jobproc.Exit{Code: code, Known: true}), ExitCode: &code}
}
