package jobs

import (
	"context"
	"syscall"

	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/primary/store"
)

// Recover is called once at boot, before Start. For every job recorded running that this
// manager does not hold:
//   - a local command job whose process (same pid and start time) is alive is re-attached;
//     one found dead finishes as "outcome unknown after restart" (with its recorded exit
//     status, when its status file has one);
//   - a local agent job is interrupted: its response died with the previous primary, so it is
//     stopped (only when it is still the recorded process) and never replayed;
//   - a worker job waits for its worker to report it (see WorkerJobs): a running agent is then
//     interrupted, a finished one delivers its report.
//
// Nothing is re-run, and a pid now naming another process is never signalled.
func (m *Manager) Recover(ctx context.Context) error {
	recs, err := m.cfg.Store.ListJobs(ctx, store.JobRunning)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if m.tracked(rec.ID) != nil {
			continue
		}
		switch {
		case rec.WorkerKey != "":
			m.log.Info("worker job awaits its worker", "job", rec.ID, "worker", rec.WorkerID)
		case rec.Kind == "agent":
			if p := jobproc.Find(rec.Pid, rec.ProcStart, m.statusPath(rec.ID)); p != nil {
				_ = p.Signal(syscall.SIGKILL)
			}
			m.log.Info("agent job interrupted by the restart", "job", rec.ID)
			m.finish(ctx, rec, store.JobResult{Outcome: OutcomeInterrupted}, nil)
		default:
			if p := jobproc.Find(rec.Pid, rec.ProcStart, m.statusPath(rec.ID)); p != nil {
				m.log.Info("job re-attached", "job", rec.ID, "pid", rec.Pid)
				m.superviseLocal(&tracked{rec: rec, cancel: make(chan struct{})}, p)
				continue
			}
			m.log.Info("job found dead after restart", "job", rec.ID, "pid", rec.Pid)
			res := store.JobResult{Outcome: OutcomeUnknown}
			if code, ok := jobproc.ReadStatus(m.statusPath(rec.ID)); ok {
				res.ExitCode = &code
			}
			m.finish(ctx, rec, res, nil)
		}
	}
	return nil
}
