package jobs

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/jobproc"
)

// Manager keeps the worker's jobs: their records, supervisors, and the current connection's
// Session. Its methods are safe for concurrent use.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	jobs    map[int64]*job
	session *Session // the current connection's, nil while disconnected
	closed  bool
	stop    chan struct{} // closed by Close: supervisors return, jobs run on
	wg      sync.WaitGroup
}

// job is one recorded job.
type job struct {
	rec        record // guarded by Manager.mu
	cancel     chan struct{}
	cancelOnce sync.Once
}

// Open loads the records in cfg.Dir and takes the jobs over: a recorded process still alive
// (same pid and start time) is supervised again, with its original ceiling; one that is gone
// finishes with the status it wrote, or an unknown code. A job recorded as starting (the
// worker died while launching it) is named by its identity file first, waiting up to
// StartWait for a process still starting; one still unnamed then is given up, its command
// never runs, and it finishes as one that could not start. Close stops supervising.
func Open(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, jobs: make(map[int64]*job), stop: make(chan struct{})}
	recs, err := m.loadRecords()
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	// One wait for all: every process launched before the restart has had this long since.
	// It is a wait for a real process, which jobproc.Settle measures by the system clock.
	nameBy := time.Now().Add(cfg.StartWait)
	for _, rec := range recs {
		j := &job{rec: rec, cancel: make(chan struct{})}
		m.jobs[rec.ID] = j
		if rec.State == stateStarting {
			if !m.identify(j, nameBy) {
				continue
			}
			rec = j.rec
		}
		switch rec.State {
		case stateStarting:
			m.log.Warn("job's process was not recorded; only its status file can tell how it ended", "job", rec.ID)
			m.finishGone(j)
		case stateRunning:
			p := jobproc.Find(rec.Pid, rec.ProcStart, m.statusPath(rec.ID))
			if p == nil {
				m.log.Info("job ended while the worker was stopped", "job", rec.ID)
				m.finishGone(j)
				continue
			}
			m.log.Info("job found running again", "job", rec.ID, "pid", rec.Pid)
			m.mu.Lock()
			m.superviseLocked(j, p)
			m.mu.Unlock()
		}
	}
	return m, nil
}

// identify settles a job recorded as starting by its identity file (see jobproc.Settle): a
// named process makes it running (recorded so), a launch given up finishes it as one that
// could not start. It reports whether the job is still to be taken over; one that stays
// starting has a process nobody can name.
func (m *Manager) identify(j *job, nameBy time.Time) bool {
	if j.rec.unreadable {
		return true
	}
	id, st, err := jobproc.Settle(m.identityPath(j.rec.ID), m.cfg.Shells.ShellUser(), nameBy, m.cfg.Poll)
	switch {
	case err != nil:
		m.log.Error("job's launch could not be settled", "job", j.rec.ID, "err", err)
		return true
	case st == jobproc.IdentityAbandoned:
		m.log.Info("job given up: the restart came before its process started", "job", j.rec.ID)
		m.finish(j, Exit{StartError: startGivenUp})
		return false
	case st != jobproc.IdentityWritten:
		m.log.Warn("job's identity file is incomplete; its process cannot be found", "job", j.rec.ID)
		return true
	}
	j.rec.State, j.rec.Pid, j.rec.ProcStart = stateRunning, id.Pid, id.Start
	if err := m.save(j.rec); err != nil {
		// Supervised anyway; the next Open names it again from the same file.
		m.log.Error("job process not recorded", "job", j.rec.ID, "pid", id.Pid, "err", err)
	}
	m.log.Info("job's process named by its identity file", "job", j.rec.ID, "pid", id.Pid)
	return true
}

// startGivenUp is the start error of a job whose launch a restart interrupted.
const startGivenUp = "the worker restarted while starting it; it never ran and is not retried"

// Close stops supervising: running jobs keep running, and the next Open takes them over. Close
// the Session first.
func (m *Manager) Close() {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.stop)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// superviseLocked watches a job's process until it ends, then finishes the job.
func (m *Manager) superviseLocked(j *job, p *jobproc.Process) {
	if m.closed {
		return // it runs on; the next Open takes it over
	}
	w := jobproc.Watch{
		Deadline: j.rec.Deadline, Grace: j.rec.Grace, Poll: m.cfg.Poll,
		Cancel: j.cancel, Stop: m.stop, Now: m.cfg.Clock.Now, LogPath: m.logPath(j.rec.ID),
	}
	m.wg.Go(func() {
		e, ok := p.Supervise(w)
		if ok {
			m.finish(j, Exit{Code: e.Code, CodeKnown: e.Known, TimedOut: e.TimedOut, Cancelled: e.Cancelled, OutputLimit: e.OutputLimit})
		}
	})
}

// finishGone finishes a job whose process is gone without this worker having watched it end:
// its status file tells the code, or nothing does.
func (m *Manager) finishGone(j *job) {
	code, ok := jobproc.ReadStatus(m.statusPath(j.rec.ID))
	m.finish(j, Exit{Code: code, CodeKnown: ok})
}

// finish records how a job ended, then reports it on the current connection.
func (m *Manager) finish(j *job, e Exit) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if j.rec.State == stateFinished {
		return
	}
	j.rec.State, j.rec.Exit = stateFinished, &e
	if err := m.save(j.rec); err != nil {
		// Reported anyway; a restart before the acknowledgement re-reads the status file.
		m.log.Error("job result not recorded", "job", j.rec.ID, "err", err)
	}
	m.log.Info("job finished", "job", j.rec.ID, "code", e.Code, "code_known", e.CodeKnown,
		"timed_out", e.TimedOut, "cancelled", e.Cancelled, "start_error", e.StartError)
	if s := m.session; s != nil {
		s.finishedLocked(j.rec.ID)
	}
}

// start records and launches a job from StartJob; s is the connection it came on, which gets
// its JobStarted, log and JobFinished. A job id already held is ignored.
func (m *Manager) start(s *Session, req *workerv1.StartJob) {
	id := req.GetJobId()
	if id <= 0 {
		m.log.Warn("StartJob without a valid job id ignored", "job", id)
		return
	}
	grace := req.GetGrace().AsDuration()
	if grace <= 0 {
		grace = jobproc.DefaultJobGrace
	}
	m.mu.Lock()
	if m.closed || m.jobs[id] != nil {
		m.mu.Unlock()
		m.log.Info("StartJob for a job already held ignored", "job", id)
		return
	}
	now := m.cfg.Clock.Now()
	j := &job{rec: record{ID: id, State: stateStarting, StartedAt: now, Deadline: now.Add(req.GetCeiling().AsDuration()), Grace: grace},
		cancel: make(chan struct{})}
	m.jobs[id] = j
	rec := j.rec
	m.mu.Unlock()

	if err := validateStart(req); err != nil {
		m.startFailed(j, err)
		return
	}
	for _, p := range []string{m.logPath(id), m.statusPath(id), m.identityPath(id)} { // a job's log starts at offset 0
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.startFailed(j, err)
			return
		}
	}
	if err := m.save(rec); err != nil {
		m.startFailed(j, err)
		return
	}
	p, err := m.launch(req)
	if err != nil {
		m.startFailed(j, err)
		return
	}

	m.mu.Lock()
	j.rec.State, j.rec.Pid, j.rec.ProcStart = stateRunning, p.Pid, p.Start
	err = m.save(j.rec)
	if err == nil {
		if m.session == s {
			s.streamLocked(id, 0, true)
		}
		m.superviseLocked(j, p)
	} else {
		j.rec.State = stateStarting
	}
	m.mu.Unlock()
	if err != nil {
		// A job whose process is not recorded could not be found after a restart: stop it.
		_ = p.Signal(syscall.SIGKILL)
		p.Reap()
		m.startFailed(j, err)
		return
	}
	m.log.Info("job started", "job", id, "pid", p.Pid, "ceiling", req.GetCeiling().AsDuration())
}

// validateStart checks what a job needs before anything is launched.
func validateStart(req *workerv1.StartJob) error {
	agent := req.GetAgent()
	switch {
	case strings.TrimSpace(req.GetCommand()) == "":
		return errors.New("the command is empty")
	case agent == "" || agent == "." || agent == ".." || strings.ContainsAny(agent, "/\x00"):
		return fmt.Errorf("%q cannot name an agent's workspace", agent)
	case req.GetCeiling().CheckValid() != nil || req.GetCeiling().AsDuration() <= 0:
		return errors.New("a job needs a positive ceiling")
	}
	return nil
}

// launch starts the job's process in its agent's workspace with the shell environment.
func (m *Manager) launch(req *workerv1.StartJob) (*jobproc.Process, error) {
	if m.cfg.BashPath == "" {
		return nil, errors.New("bash is not installed on this worker")
	}
	dir, err := m.cfg.Shells.Workspace(req.GetAgent())
	if err != nil {
		return nil, err
	}
	env := m.cfg.Shells.Environment(jobEnv(m.cfg.AgentCLIURL, req.GetAgentCliEnv(), req.GetExtraEnv(), req.GetTraceparent(), req.GetTracestate()), dir)
	sb, err := m.cfg.Shells.JobSandbox(req.GetAgent(), dir, m.statusPath(req.GetJobId()))
	if err != nil {
		return nil, err
	}
	return jobproc.Launch(jobproc.Spec{
		Bash: m.cfg.BashPath, Command: req.GetCommand(), Dir: dir, Env: env,
		LogPath: m.logPath(req.GetJobId()), StatusPath: m.statusPath(req.GetJobId()), IdentityPath: m.identityPath(req.GetJobId()),
		Sandbox: sb, User: m.cfg.Shells.ShellUser(),
	})
}

// startFailed finishes a job that could not start; it is reported like any finished job.
func (m *Manager) startFailed(j *job, err error) {
	m.log.Warn("job could not start", "job", j.rec.ID, "err", err)
	m.finish(j, Exit{StartError: plainError(err)})
}

func plainError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s %s: %v", pe.Op, pe.Path, pe.Err)
	}
	return err.Error()
}

// cancel stops a running job (TERM to its group, KILL after its grace); it then finishes as
// cancelled. Anything else is left alone.
func (m *Manager) cancel(id int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.jobs[id]
	if j == nil || j.rec.State == stateFinished {
		m.log.Info("CancelJob for a job not running ignored", "job", id)
		return
	}
	j.cancelOnce.Do(func() { close(j.cancel) })
}

// ack forgets a finished job whose result the primary has saved, deleting its files.
func (m *Manager) ack(id int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.jobs[id]
	switch {
	case j == nil:
		return // acknowledged before
	case j.rec.State != stateFinished:
		m.log.Warn("AckJob for a running job ignored", "job", id)
		return
	}
	delete(m.jobs, id)
	if s := m.session; s != nil {
		s.dropLocked(id)
	}
	if err := m.remove(id); err != nil {
		m.log.Warn("acknowledged job's files not all removed", "job", id, "err", err)
	}
}

// exitOf returns a held job's exit (nil while it runs); held is false once it is acknowledged.
func (m *Manager) exitOf(id int64) (e *Exit, held bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.jobs[id]
	if j == nil {
		return nil, false
	}
	if j.rec.State != stateFinished {
		return nil, true
	}
	c := *j.rec.Exit
	return &c, true
}

// statesLocked lists every held job for Hello, by id.
func (m *Manager) statesLocked() []*workerv1.JobState {
	out := make([]*workerv1.JobState, 0, len(m.jobs))
	for id, j := range m.jobs {
		st := &workerv1.JobState{JobId: id, Running: j.rec.State != stateFinished}
		if !st.Running {
			st.Exit = j.rec.Exit.proto()
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b *workerv1.JobState) int { return cmp.Compare(a.JobId, b.JobId) })
	return out
}
