package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/primary/store"
)

// Defaults (contract: interaction controls).
const (
	DefaultCommandCeiling = 60 * time.Minute
	DefaultAgentCeiling   = 7 * 24 * time.Hour
	DefaultGrace          = 2 * time.Second
	DefaultPoll           = 100 * time.Millisecond
	DefaultMaxRunning     = 20
	DefaultMaxPerThread   = 3
)

// Errors Start and Cancel return; compare with errors.Is. Cap refusals also match
// store.ErrJobCapReached and store.ErrThreadJobCapReached.
var (
	ErrInvalid    = errors.New("invalid job")
	ErrCapReached = errors.New("job cap reached")
	ErrNotRunning = errors.New("job is not running on this primary")
)

// Config configures a Manager.
type Config struct {
	Store store.Jobs
	// StateDir is the primary's state directory; logs go to <StateDir>/jobs/<id>.log.
	StateDir string
	// Notify is called after a commit that wrote a continuation (continuation.Service.Notify).
	Notify func()
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// CommandCeiling and AgentCeiling are the ceilings when JobSpec.Ceiling is zero.
	CommandCeiling, AgentCeiling time.Duration
	// Grace is the time between SIGTERM and SIGKILL at the ceiling or on Cancel.
	Grace time.Duration
	// Poll is how often a job's /proc entry is checked for its exit.
	Poll time.Duration
	// MaxRunning and MaxPerThread are the caps.
	MaxRunning, MaxPerThread int
	// BashPath is bash; empty means looked up in PATH.
	BashPath string
	Logger   *slog.Logger
}

// Validate fills the defaults and checks the rest.
func (c *Config) Validate() error {
	if c.Store == nil {
		return errors.New("jobs: Config.Store is required")
	}
	if !filepath.IsAbs(c.StateDir) {
		return errors.New("jobs: Config.StateDir must be an absolute path")
	}
	if c.Notify == nil {
		c.Notify = func() {}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	setDefault(&c.CommandCeiling, DefaultCommandCeiling)
	setDefault(&c.AgentCeiling, DefaultAgentCeiling)
	setDefault(&c.Grace, DefaultGrace)
	setDefault(&c.Poll, DefaultPoll)
	if c.MaxRunning <= 0 {
		c.MaxRunning = DefaultMaxRunning
	}
	if c.MaxPerThread <= 0 {
		c.MaxPerThread = DefaultMaxPerThread
	}
	if c.BashPath == "" {
		p, err := exec.LookPath("bash")
		if err != nil {
			return fmt.Errorf("jobs: find bash: %w", err)
		}
		c.BashPath = p
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// JobSpec is a job to start.
type JobSpec struct {
	Kind    string // "command" or "agent"
	Command string
	Label   string
	Channel string
	Thread  string
	Author  string
	Agent   string
	// Workspace is the working directory.
	Workspace string
	// Env is the complete environment ("K=V"); never merged with the primary's.
	Env []string
	// Ceiling: zero means the kind's default.
	Ceiling time.Duration
}

// Job is a job as Get and List report it.
type Job struct {
	store.Job
	// Runtime is how long it ran, or has been running.
	Runtime time.Duration
}

// Manager starts, supervises and finishes jobs. Its methods are safe for concurrent use.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	watching map[int64]*watch // jobs this manager supervises
	closed   bool
	stop     chan struct{}
	wg       sync.WaitGroup
}

// watch is one supervised job.
type watch struct {
	cancel     chan struct{}
	cancelOnce sync.Once
}

// New returns a Manager; cfg is validated.
func New(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Manager{cfg: cfg, log: cfg.Logger.With("component", "jobs"), watching: map[int64]*watch{}, stop: make(chan struct{})}, nil
}

// Close stops supervising. Running jobs keep running; the next primary's Recover re-finds
// them. It waits for the supervisors to return.
func (m *Manager) Close() {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.stop)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// LogDir is where job logs are.
func (m *Manager) LogDir() string { return filepath.Join(m.cfg.StateDir, "jobs") }

// Start records the job (refusing it when a cap is reached), starts it and returns its id.
// A job that is recorded but cannot start finishes at once as "could not start", with its
// continuation; Start then still returns its id and no error.
func (m *Manager) Start(ctx context.Context, spec JobSpec) (int64, error) {
	ceiling := spec.Ceiling
	switch {
	case spec.Kind != "command" && spec.Kind != "agent":
		return 0, fmt.Errorf("%w: kind must be command or agent", ErrInvalid)
	case strings.TrimSpace(spec.Command) == "":
		return 0, fmt.Errorf("%w: the command is empty", ErrInvalid)
	case spec.Channel == "":
		return 0, fmt.Errorf("%w: a job needs a channel", ErrInvalid)
	case ceiling < 0:
		return 0, fmt.Errorf("%w: the ceiling cannot be negative", ErrInvalid)
	case ceiling == 0 && spec.Kind == "agent":
		ceiling = m.cfg.AgentCeiling
	case ceiling == 0:
		ceiling = m.cfg.CommandCeiling
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return 0, errors.New("jobs: manager is closed")
	}
	if err := os.MkdirAll(m.LogDir(), 0o700); err != nil {
		return 0, fmt.Errorf("jobs: log directory: %w", err)
	}
	rec, err := m.cfg.Store.CreateJob(ctx, store.NewJob{
		Kind: spec.Kind, Command: spec.Command, Label: spec.Label, Channel: spec.Channel, Thread: spec.Thread,
		Author: spec.Author, Agent: spec.Agent, Workspace: spec.Workspace, Ceiling: ceiling, LogDir: m.LogDir(),
	}, store.JobCaps{Total: m.cfg.MaxRunning, PerThread: m.cfg.MaxPerThread})
	switch {
	case errors.Is(err, store.ErrJobCapReached):
		return 0, fmt.Errorf("%w: %d background jobs are already running on this primary; wait for one to finish: %w",
			ErrCapReached, m.cfg.MaxRunning, err)
	case errors.Is(err, store.ErrThreadJobCapReached):
		return 0, fmt.Errorf("%w: %d background jobs are already running in this conversation; wait for one to finish: %w",
			ErrCapReached, m.cfg.MaxPerThread, err)
	case err != nil:
		return 0, err
	}

	cmd, err := m.launch(rec, spec.Env)
	if err != nil {
		m.log.Warn("job could not start", "job", rec.ID, "err", err)
		m.finish(context.WithoutCancel(ctx), rec, store.JobResult{Outcome: outcomeCouldNotStart + ": " + plainStartError(err)})
		return rec.ID, nil
	}
	rec.Pid = cmd.Process.Pid
	if st, err := readProcStat(rec.Pid); err == nil {
		rec.ProcStart = st.start
	}
	if err := m.cfg.Store.SetJobProcess(context.WithoutCancel(ctx), rec.ID, rec.Pid, rec.ProcStart); err != nil {
		// Supervised anyway; only a restart before it ends loses it (finished as unknown).
		m.log.Error("job process not recorded", "job", rec.ID, "pid", rec.Pid, "err", err)
	}
	m.log.Info("job started", "job", rec.ID, "pid", rec.Pid)
	m.supervise(rec, cmd)
	return rec.ID, nil
}

// launch starts `bash -lc <command>` in its own session with stdout and stderr appended to the
// job's log, so the job keeps writing its log when the primary is gone.
func (m *Manager) launch(rec store.Job, env []string) (*exec.Cmd, error) {
	if fi, err := os.Stat(rec.Workspace); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the workspace %s is not a usable directory", rec.Workspace)
	}
	logf, err := os.OpenFile(rec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the process holds its own copy
	if env == nil {
		env = []string{} // nil would make os/exec inherit os.Environ()
	}
	cmd := &exec.Cmd{
		Path:   m.cfg.BashPath,
		Args:   []string{"bash", "-lc", rec.Command},
		Env:    env,
		Dir:    rec.Workspace,
		Stdout: logf,
		Stderr: logf,
		// Setsid: its own session and process group, so the group can be signalled as one and
		// the job survives the primary (no Pdeathsig).
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

func plainStartError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s %s: %v", pe.Op, pe.Path, pe.Err)
	}
	return err.Error()
}

// supervise watches a job until it ends (cmd is nil for a job re-attached after a restart,
// which is not this process's child), then finishes it.
func (m *Manager) supervise(rec store.Job, cmd *exec.Cmd) {
	w := &watch{cancel: make(chan struct{})}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return // the job runs on; the next primary re-finds it
	}
	m.watching[rec.ID] = w
	m.wg.Go(func() {
		defer func() {
			m.mu.Lock()
			delete(m.watching, rec.ID)
			m.mu.Unlock()
		}()
		m.watchUntilExit(rec, cmd, w)
	})
}

func (m *Manager) watchUntilExit(rec store.Job, cmd *exec.Cmd, w *watch) {
	remaining := rec.CreatedAt.Add(rec.Ceiling).Sub(m.cfg.Now())
	ceiling := time.NewTimer(max(remaining, 0))
	defer ceiling.Stop()
	tick := time.NewTicker(m.cfg.Poll)
	defer tick.Stop()
	var kill <-chan time.Time
	var timedOut, cancelled bool
	stopping := func() {
		_ = signalSession(rec.Pid, rec.ProcStart, syscall.SIGTERM)
		t := time.NewTimer(m.cfg.Grace)
		kill = t.C // an unfired timer is collected by the runtime
		ceiling.Stop()
	}
	cancel := w.cancel
	for !m.exited(rec, cmd) {
		select {
		case <-m.stop:
			return // the job runs on; the next primary re-finds it
		case <-tick.C:
		case <-ceiling.C:
			timedOut = true
			stopping()
		case <-cancel:
			cancelled, cancel = true, nil
			if !timedOut && kill == nil {
				stopping()
			}
		case <-kill:
			kill = nil
			_ = signalSession(rec.Pid, rec.ProcStart, syscall.SIGKILL)
		}
	}

	res := store.JobResult{}
	if cmd != nil {
		// The leader is a zombie until reaped, so the group id is still ours: kill what the
		// job left behind in its group, then reap it.
		_ = syscall.Kill(-rec.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		code := bashexec.ExitCode(cmd.ProcessState)
		res.ExitCode = &code
		res.Outcome = classify(code, timedOut, cancelled && !timedOut)
	} else {
		res.Outcome = OutcomeReattachedDone
		switch {
		case timedOut:
			res.Outcome = OutcomeTimeLimit
		case cancelled:
			res.Outcome = OutcomeCancelled
		}
	}
	m.finish(context.Background(), rec, res)
}

// exited reports whether the job's process has ended: for our child, it is a zombie awaiting
// Wait; for a re-attached job, its /proc entry is gone, a zombie, or a different process.
func (m *Manager) exited(rec store.Job, cmd *exec.Cmd) bool {
	if cmd == nil {
		return !procAlive(rec.Pid, rec.ProcStart)
	}
	st, err := readProcStat(rec.Pid)
	return err != nil || st.state == 'Z' || st.state == 'X'
}

// finish saves the result with the job's continuation in one transaction, then notifies. A
// second finish of the same job changes nothing and adds no continuation.
func (m *Manager) finish(ctx context.Context, rec store.Job, res store.JobResult) {
	if res.Tail == "" {
		res.Tail = readTail(rec.LogPath, TailChars)
	}
	j := Job{Job: rec, Runtime: max(m.cfg.Now().Sub(rec.CreatedAt), 0)}
	j.JobResult = res
	finished, created, err := m.cfg.Store.FinishJob(ctx, rec.ID, res, store.NewContinuation{
		IdempotencyKey: "job:" + strconv.FormatInt(rec.ID, 10),
		Channel:        rec.Channel,
		Thread:         rec.Thread,
		Text:           continuationText(j),
	})
	if err != nil {
		// The record stays running; the next Recover finishes it as unknown.
		m.log.Error("job result not saved", "job", rec.ID, "err", err)
		return
	}
	m.log.Info("job finished", "job", rec.ID, "outcome", res.Outcome, "saved", finished)
	if created {
		m.cfg.Notify()
	}
}

// Cancel stops a running job: SIGTERM to its group, SIGKILL after the grace period. It returns
// at once; the job finishes as cancelled.
func (m *Manager) Cancel(id int64) error {
	m.mu.Lock()
	w, ok := m.watching[id]
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: job %d", ErrNotRunning, id)
	}
	w.cancelOnce.Do(func() { close(w.cancel) })
	return nil
}

// Get returns one job; a running job's tail is read from its log now.
func (m *Manager) Get(ctx context.Context, id int64) (Job, error) {
	rec, err := m.cfg.Store.Job(ctx, id)
	if err != nil {
		return Job{}, err
	}
	return m.view(rec), nil
}

// List returns the jobs with the status (all when empty), newest first.
func (m *Manager) List(ctx context.Context, status store.JobStatus) ([]Job, error) {
	recs, err := m.cfg.Store.ListJobs(ctx, status)
	if err != nil {
		return nil, err
	}
	out := make([]Job, len(recs))
	for i, r := range recs {
		out[i] = m.view(r)
	}
	return out, nil
}

func (m *Manager) view(rec store.Job) Job {
	j := Job{Job: rec}
	if rec.Status == store.JobRunning {
		j.Tail = readTail(rec.LogPath, TailChars)
		j.Runtime = max(m.cfg.Now().Sub(rec.CreatedAt), 0)
	} else {
		j.Runtime = max(rec.EndedAt.Sub(rec.CreatedAt), 0)
	}
	return j
}

// Recover is called once at boot, before Start. For every job recorded running that this
// manager does not supervise: when its process (same pid and start time) is alive it is
// re-attached; otherwise it is finished as "outcome unknown after restart". Nothing is re-run,
// and a pid now naming another process is never signalled.
func (m *Manager) Recover(ctx context.Context) error {
	recs, err := m.cfg.Store.ListJobs(ctx, store.JobRunning)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		m.mu.Lock()
		_, watched := m.watching[rec.ID]
		m.mu.Unlock()
		switch {
		case watched:
		case rec.Pid > 0 && procAlive(rec.Pid, rec.ProcStart):
			m.log.Info("job re-attached", "job", rec.ID, "pid", rec.Pid)
			m.supervise(rec, nil)
		default:
			m.log.Info("job found dead after restart", "job", rec.ID, "pid", rec.Pid)
			m.finish(ctx, rec, store.JobResult{Outcome: OutcomeUnknown})
		}
	}
	return nil
}
