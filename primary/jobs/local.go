package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/store"
)

// startLocal launches a recorded, tracked job on the primary's host and supervises it. The
// record is committed before the process exists, and the process names itself in its identity
// file before its command runs: a primary killed at any instant of this leaves a job the next
// one finds (see Recover).
func (m *Manager) startLocal(ctx context.Context, t *tracked, env []string) {
	rec := t.rec
	sb, err := m.cfg.Sandboxes.JobSandbox(rec.Agent, rec.Workspace, m.statusPath(rec.ID))
	var p *jobproc.Process
	if err == nil {
		p, err = jobproc.Launch(jobproc.Spec{
			Bash: m.cfg.BashPath, Command: rec.Command, Dir: rec.Workspace, Env: env,
			LogPath: rec.LogPath, StatusPath: m.statusPath(rec.ID), IdentityPath: m.identityPath(rec.ID),
			Sandbox: sb, User: m.cfg.ShellUser,
		})
	}
	if err != nil {
		m.log.Warn("job could not start", "job", rec.ID, "err", err)
		m.forget(t)
		m.finish(ctx, rec, store.JobResult{Outcome: outcomeCouldNotStart + ": " + plainStartError(err)}, t)
		return
	}
	rec.Pid, rec.ProcStart = p.Pid, p.Start
	m.mu.Lock() // a tracked job's record changes under m.mu (see record)
	t.rec.Pid, t.rec.ProcStart = rec.Pid, rec.ProcStart
	m.mu.Unlock()
	if err := m.cfg.Store.SetJobProcess(ctx, rec.ID, rec.Pid, rec.ProcStart); err != nil {
		// Supervised anyway; after a restart its identity file names it.
		m.log.Error("job process not recorded", "job", rec.ID, "pid", rec.Pid, "err", err)
	}
	m.log.Info("job started", "job", rec.ID, "pid", rec.Pid)
	m.superviseLocal(t, p)
}

// withTrace is a local job's environment with the TRACEPARENT and TRACESTATE of the call that
// started it, so the tool calls the job makes continue that trace.
func withTrace(ctx context.Context, env []string) []string {
	trace := telemetry.ShellEnv(ctx)
	if len(trace) == 0 {
		return env
	}
	out := slices.Clip(env)
	for k, v := range trace {
		out = append(out, k+"="+v)
	}
	return out
}

func plainStartError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s %s: %v", pe.Op, pe.Path, pe.Err)
	}
	return err.Error()
}

// superviseLocal watches a tracked local job until it ends, then finishes it. When the manager
// closes first the job runs on; the next primary re-finds it.
func (m *Manager) superviseLocal(t *tracked, p *jobproc.Process) {
	// Under the lock Close sets closed with: no supervisor starts once Close waits for them.
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.wg.Go(func() {
		rec := t.rec
		exit, ok := p.Supervise(jobproc.Watch{
			Deadline: t.deadline, Grace: m.cfg.Settings.Grace, Poll: m.cfg.Poll,
			Cancel: t.cancel, Stop: m.stop, Now: m.cfg.Clock.Now, LogPath: rec.LogPath, MaxLogBytes: m.cfg.MaxLogBytes,
		})
		if !ok {
			return
		}
		res := store.JobResult{Outcome: classify(exit)}
		if exit.Known {
			code := exit.Code
			res.ExitCode = &code
		}
		m.finish(context.Background(), rec, res, t)
		m.forget(t)
	})
}
