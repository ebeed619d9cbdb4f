package jobs

import (
	"context"
	"errors"
	"fmt"
	"github.com/turncli/turncli/internal/sandbox"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turncli/turncli/client/engines"
	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/internal/shellpriv"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/store"
)

// Defaults (contract: interaction controls).
const (
	DefaultCommandCeiling = 60 * time.Minute
	DefaultAgentCeiling   = 7 * 24 * time.Hour
	DefaultPoll           = 100 * time.Millisecond
	DefaultMaxRunning     = 20
	DefaultMaxPerThread   = 3
	// DefaultLostWorkerAfter is how long past its ceiling (and grace) a worker job may stay
	// unreported before it is finished as unknown.
	DefaultLostWorkerAfter = 5 * time.Minute
	DefaultSweepEvery      = time.Minute
	// DefaultAgentReportGrace is how long after the primary starts a worker may take to report
	// a background agent started by an earlier primary (see Settings.AgentReportGrace).
	DefaultAgentReportGrace = 5 * time.Minute
	// DefaultStartWait is how long Recover waits for a job recorded without its process to
	// name it (see Config.StartWait).
	DefaultStartWait = 5 * time.Second
)

// MaxReportBytes bounds an agent's report as delivered; a longer one is cut, saying so.
const MaxReportBytes = 1 << 20

// Errors Start and Cancel return; compare with errors.Is. Cap refusals also match
// store.ErrJobCapReached and store.ErrThreadJobCapReached.
var (
	ErrInvalid    = fault.New(fault.InvalidArgument, "invalid job")
	ErrCapReached = fault.New(fault.LimitExceeded, "job cap reached")
	ErrNotRunning = fault.New(fault.FailedPrecondition, "job is not running")
)

// JobSandboxes gives a local job of an agent the sandbox it runs in: nil where shells are not
// isolated. *shellhost.Runner is one.
type JobSandboxes interface {
	JobSandbox(agent, workspace, key string) (*sandbox.Job, error)
}

// Config configures a Manager: the jobs' section a person configures (Settings), whole, and
// what the primary builds or tunes for its tests.
type Config struct {
	// Settings bound the jobs: ceilings and grace. Validate fills its zero fields as the
	// section's own Validate does.
	Settings Settings
	Store    store.Jobs
	// StateDir is the primary's state directory; logs go to <StateDir>/jobs/<id>.log.
	StateDir string
	// Workers runs worker jobs; nil refuses them.
	Workers Workers
	// Notify is called after a commit that wrote a continuation (continuation.Outbox.Notify).
	Notify func()
	// Clock measures ceilings and paces the sweep of worker jobs (clock.System when nil).
	Clock clock.Clock
	// ShellUser is the user local jobs run as outside a sandbox (the shells' user); nil: this
	// process's own.
	ShellUser *shellpriv.User
	// Poll is how often a local job's /proc entry is checked for its exit.
	Poll time.Duration
	// StartWait: a local job an earlier primary recorded but did not see start is given this
	// long at boot for its process to write its identity file; one still unnamed then is
	// given up, and its command never runs.
	StartWait time.Duration
	// MaxRunning and MaxPerThread are the caps.
	MaxRunning, MaxPerThread int
	// MaxLogBytes bounds a job's log: a job whose output passes it is stopped (zero:
	// jobproc.DefaultMaxLogBytes). Workers apply their own bound to their jobs.
	MaxLogBytes int64
	// Secrets are the live secrets redacted from every tail, report, continuation and log
	// read; nil redacts only a job's own (JobSpec.Secrets).
	Secrets *secrets.Registry
	// OutputSecrets are values redacted from every job's output like the live secrets, whether
	// or not its job is tracked: the background agents' engine environment
	// (interaction.Settings.AgentEnv), credentials no turn's grant holds.
	OutputSecrets []string
	// LostWorkerAfter and SweepEvery: a worker job unreported LostWorkerAfter past its ceiling
	// finishes as unknown; running jobs are checked every SweepEvery.
	LostWorkerAfter, SweepEvery time.Duration
	// Events receives job changes for people watching live; nil publishes nothing.
	Events *events.Bus
	// BashPath is bash; empty means looked up in PATH.
	BashPath string
	// Sandboxes gives each local job the sandbox it runs in (none where shells are not
	// isolated).
	Sandboxes JobSandboxes
	Logger    *slog.Logger
}

// Validate fills the defaults and checks the rest.
func (c *Config) Validate() error {
	if c.Store == nil {
		return errors.New("jobs: Config.Store is required")
	}
	if c.Sandboxes == nil {
		return errors.New("jobs: Config.Sandboxes is required")
	}
	if !filepath.IsAbs(c.StateDir) {
		return errors.New("jobs: Config.StateDir must be an absolute path")
	}
	if c.Notify == nil {
		c.Notify = func() {}
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	c.Settings = c.Settings.withDefaults()
	setDefault(&c.Poll, DefaultPoll)
	setDefault(&c.StartWait, DefaultStartWait)
	setDefault(&c.LostWorkerAfter, DefaultLostWorkerAfter)
	if c.MaxLogBytes <= 0 {
		c.MaxLogBytes = jobproc.DefaultMaxLogBytes
	}
	if c.Secrets == nil {
		c.Secrets = secrets.New()
	}
	setDefault(&c.SweepEvery, DefaultSweepEvery)
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
	if c.Events == nil {
		c.Events = events.New()
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
	// WorkerKey runs the job on a worker of this key (the response's Binding first, when
	// given); empty runs it on the primary's host.
	WorkerKey string
	Binding   *response.Binding
	// Workspace is the working directory of a local job (workers use the agent's own).
	Workspace string
	// Env is a local job's complete environment ("K=V"); never merged with the primary's.
	Env []string
	// AgentCLIEnv and ExtraEnv are what a worker job gets besides the worker's own shell
	// environment (see WorkerJob).
	AgentCLIEnv, ExtraEnv map[string]string
	// Ceiling: zero means the kind's default.
	Ceiling time.Duration
	// Secrets are values redacted from this job's output while it is tracked, besides the
	// live secrets of Config.Secrets.
	Secrets []string
	// OnEnd runs once the job's result is saved (or it could not start), in this process
	// only: an agent job closes its response there. It runs when the job is parked too.
	OnEnd func()
	// Engine names the engine driver of an agent job (see engine.go); empty: the job's whole
	// output is its report.
	Engine string
	// Park parks the job when its engine stopped to wait for people (nil: such a job fails).
	Park Parker
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
	// started is when this manager (so this primary) started: jobs recorded before it belong
	// to an earlier primary.
	started time.Time

	finished atomic.Int64 // results this manager saved

	mu      sync.Mutex
	running map[int64]*tracked // jobs this manager supervises or awaits from a worker
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// tracked is one job this manager is responsible for.
type tracked struct {
	rec        store.Job
	cancel     chan struct{}
	cancelOnce sync.Once
	secrets    []string
	onEnd      func()
	park       Parker
	// deadline is when the job's ceiling passes: its ceiling after it was created, or after
	// it was resumed from parking.
	deadline time.Time
	// logStart is where the log ended when this run began (non-zero for a resumed job).
	logStart int64
}

func (t *tracked) requestCancel() { t.cancelOnce.Do(func() { close(t.cancel) }) }

func (t *tracked) cancelRequested() bool {
	select {
	case <-t.cancel:
		return true
	default:
		return false
	}
}

// New returns a Manager; cfg is validated.
func New(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, log: cfg.Logger.With("component", "jobs"), running: map[int64]*tracked{}, stop: make(chan struct{}),
		started: cfg.Clock.Now()}
	m.wg.Go(m.sweep)
	return m, nil
}

// FinishedCount is how many jobs this manager finished (saved a result for) since it started.
func (m *Manager) FinishedCount() int64 { return m.finished.Load() }

// Close stops supervising. Running jobs keep running; the next primary re-finds them. It waits
// for the supervisors to return.
func (m *Manager) Close() {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.stop)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// CommandCeiling is the ceiling of command jobs.
func (m *Manager) CommandCeiling() time.Duration { return m.cfg.Settings.CommandCeiling }

// AgentLifetime is the longest an agent job may run: its ceiling, then the grace between
// SIGTERM and SIGKILL.
func (m *Manager) AgentLifetime() time.Duration {
	return m.cfg.Settings.AgentCeiling + m.cfg.Settings.Grace
}

// Caps are the most running jobs in all and per conversation.
func (m *Manager) Caps() (total, perThread int) { return m.cfg.MaxRunning, m.cfg.MaxPerThread }

// CheckCaps reports the cap a new job in the conversation would exceed now (the same errors
// as Start), without recording anything: a decision can be refused before it is taken.
func (m *Manager) CheckCaps(ctx context.Context, channel, thread string) error {
	running, err := m.cfg.Store.ListJobs(ctx, store.JobRunning)
	if err != nil {
		return err
	}
	inThread := 0
	for _, j := range running {
		if j.Channel == channel && j.Thread == thread {
			inThread++
		}
	}
	switch {
	case len(running) >= m.cfg.MaxRunning:
		return fmt.Errorf("%w: %w", ErrCapReached, store.ErrJobCapReached)
	case inThread >= m.cfg.MaxPerThread:
		return fmt.Errorf("%w: %w", ErrCapReached, store.ErrThreadJobCapReached)
	}
	return nil
}

// LogDir is where job logs are.
func (m *Manager) LogDir() string { return filepath.Join(m.cfg.StateDir, "jobs") }

// StatusPath is where a local job's exit status is written.
func (m *Manager) statusPath(id int64) string {
	return filepath.Join(m.LogDir(), strconv.FormatInt(id, 10)+".status")
}

// identityPath is where a local job's process writes its pid and start time before its
// command runs (see jobproc.Settle).
func (m *Manager) identityPath(id int64) string {
	return filepath.Join(m.LogDir(), strconv.FormatInt(id, 10)+".proc")
}

// Start records the job (refusing it when a cap is reached), starts it and returns its id.
// A job that is recorded but cannot start finishes at once as "could not start", with its
// continuation; Start then still returns its id and no error.
func (m *Manager) Start(ctx context.Context, spec JobSpec) (int64, error) {
	return m.start(ctx, spec, func(ctx context.Context, j store.NewJob, caps store.JobCaps) (store.Job, error) {
		return m.cfg.Store.CreateJob(ctx, j, caps)
	})
}

// StartWith is Start with the record created by create (for example together with an
// approval, in its transaction).
func (m *Manager) StartWith(ctx context.Context, spec JobSpec, create func(context.Context, store.NewJob, store.JobCaps) (store.Job, error)) (int64, error) {
	return m.start(ctx, spec, create)
}

func (m *Manager) start(ctx context.Context, spec JobSpec, create func(context.Context, store.NewJob, store.JobCaps) (store.Job, error)) (int64, error) {
	ceiling, err := m.ceiling(spec)
	if err != nil {
		return 0, err
	}
	if spec.WorkerKey != "" && m.cfg.Workers == nil {
		return 0, fmt.Errorf("%w: this primary has no workers", ErrInvalid)
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
	rec, err := create(ctx, store.NewJob{
		Kind: spec.Kind, Command: spec.Command, Label: spec.Label, Channel: spec.Channel, Thread: spec.Thread,
		Author: spec.Author, Agent: spec.Agent, Workspace: spec.Workspace, WorkerKey: spec.WorkerKey,
		Ceiling: ceiling, LogDir: m.LogDir(), Engine: spec.Engine,
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
	t := &tracked{rec: rec, cancel: make(chan struct{}), secrets: spec.Secrets, onEnd: spec.OnEnd, park: spec.Park,
		deadline: rec.CreatedAt.Add(rec.Ceiling)}
	ctx = context.WithoutCancel(ctx)
	// Tracked before anyone hears of it, so a Cancel that follows at once finds it: a local
	// job's supervisor then stops it as soon as it runs, a worker gets its cancel with it.
	if !m.track(t) {
		m.finish(ctx, rec, store.JobResult{Outcome: outcomeCouldNotStart + ": the primary is shutting down"}, t)
		return rec.ID, nil
	}
	m.publish("job.started", rec)
	if spec.WorkerKey != "" {
		m.startRemote(ctx, t, spec)
	} else {
		m.startLocal(ctx, t, withTrace(ctx, spec.Env))
	}
	return rec.ID, nil
}

func (m *Manager) ceiling(spec JobSpec) (time.Duration, error) {
	switch {
	case spec.Kind != "command" && spec.Kind != "agent":
		return 0, fmt.Errorf("%w: kind must be command or agent", ErrInvalid)
	case strings.TrimSpace(spec.Command) == "":
		return 0, fmt.Errorf("%w: the command is empty", ErrInvalid)
	case spec.Channel == "":
		return 0, fmt.Errorf("%w: a job needs a channel", ErrInvalid)
	case spec.Ceiling < 0:
		return 0, fmt.Errorf("%w: the ceiling cannot be negative", ErrInvalid)
	case spec.Ceiling > 0:
		return spec.Ceiling, nil
	case spec.Kind == "agent":
		return m.cfg.Settings.AgentCeiling, nil
	default:
		return m.cfg.Settings.CommandCeiling, nil
	}
}

// track registers t as supervised; false when the manager is closed.
func (m *Manager) track(t *tracked) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.running[t.rec.ID] = t
	return true
}

// forget stops tracking t, unless a later run of the same job (see Resume) took its place.
func (m *Manager) forget(t *tracked) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running[t.rec.ID] == t {
		delete(m.running, t.rec.ID)
	}
}

// cancelTracked asks the tracked local run of job id to stop and returns it; it returns a
// tracked worker job as it is, and nil when job id is not tracked. The request is made under
// m.mu, so a run that parks either sees it or is forgotten first (see park).
func (m *Manager) cancelTracked(id int64) *tracked {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.running[id]
	if t != nil && t.rec.WorkerKey == "" {
		t.requestCancel()
	}
	return t
}

func (m *Manager) untrack(id int64) *tracked {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.running[id]
	delete(m.running, id)
	return t
}

func (m *Manager) tracked(id int64) *tracked {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running[id]
}

// finish saves the result with the job's continuation in one transaction, then notifies and
// runs the job's OnEnd. A second finish of the same job changes nothing and adds no
// continuation. It reports whether the result is saved (now or before).
func (m *Manager) finish(ctx context.Context, rec store.Job, res store.JobResult, t *tracked) bool {
	report, post := "", false
	switch {
	case rec.Kind == "agent" && rec.Engine != "":
		var start int64
		if t != nil {
			start = t.logStart
		}
		r, ok := engineResult(rec.LogPath, start)
		if ok && r.Status == engines.StatusParked && res.Outcome == OutcomeSuccess && m.park(ctx, rec, r, t) {
			return true
		}
		var text string
		res, text = engineEnd(res, rec.Run, r, ok)
		if res.Tail == "" {
			res.Tail = m.engineTail(rec.LogPath, t)
		}
		if res.Outcome == OutcomeSuccess {
			report, post = m.reportOf(text, t), true
			if report == "" {
				report = "(The agent finished without a final message.)"
			}
		}
	case rec.Kind == "agent" && res.Outcome == OutcomeSuccess:
		report, post = m.report(rec.LogPath, t), true
		if report == "" {
			report = "(The agent finished without printing a report.)"
		}
	}
	if res.Tail == "" {
		res.Tail = m.tail(rec.LogPath, t)
	} else {
		res.Tail = m.redact(res.Tail, t)
	}
	res.Outcome = m.redact(res.Outcome, t) // a start error can quote the command
	j := Job{Job: rec, Runtime: max(m.cfg.Clock.Now().Sub(rec.CreatedAt), 0)}
	j.JobResult = res
	finished, created, err := m.cfg.Store.FinishJob(ctx, rec.ID, res, store.NewContinuation{
		IdempotencyKey: ReportKey(rec.ID),
		Channel:        rec.Channel,
		Thread:         rec.Thread,
		Text:           m.redact(continuationText(j, report), t),
		Post:           post,
	})
	if err != nil {
		// The record stays running; the next Recover finishes it as unknown.
		m.log.Error("job result not saved", "job", rec.ID, "err", err)
		return false
	}
	m.log.Info("job finished", "job", rec.ID, "outcome", res.Outcome, "saved", finished)
	if finished {
		m.finished.Add(1)
		rec.Status, rec.JobResult = store.JobFinished, res
		m.publish("job.finished", rec)
	}
	if created {
		m.cfg.Notify()
	}
	if t != nil && t.onEnd != nil {
		t.onEnd()
	}
	return true
}

// publish puts a job's change on the live feed (never its output: people read that from the
// job's tail and log).
func (m *Manager) publish(kind string, rec store.Job) {
	m.cfg.Events.Publish(kind, "job/"+strconv.FormatInt(rec.ID, 10), map[string]any{
		"id": rec.ID, "kind": rec.Kind, "label": rec.Label, "channel": rec.Channel, "thread": rec.Thread,
		"author": rec.Author, "agent": rec.Agent, "worker_key": rec.WorkerKey, "status": string(rec.Status), "outcome": rec.Outcome,
	})
}

// Cancel stops a running job: SIGTERM to its group, SIGKILL after the grace period (on its
// worker for a worker job). It returns at once; the job finishes as cancelled.
func (m *Manager) Cancel(ctx context.Context, id int64) error {
	// The saved record is read first: a job stays tracked for a moment after its result is
	// saved, and whoever saw it finished must hear that it is not running.
	if _, err := m.runningRecord(ctx, id); err != nil {
		return err
	}
	if t := m.cancelTracked(id); t != nil {
		if t.rec.WorkerKey != "" {
			return m.cancelRemote(ctx, t)
		}
		return nil
	}
	// Not tracked: read again, for a job that parked or finished since (see park).
	rec, err := m.runningRecord(ctx, id)
	if err != nil {
		return err
	}
	if rec.Parked() {
		return m.finishParked(ctx, rec, store.JobResult{Outcome: OutcomeCancelled})
	}
	if rec.WorkerKey != "" { // its worker has not reported it since this primary started
		return m.requestCancel(ctx, id)
	}
	return fmt.Errorf("%w: job %d is not attached to this primary yet", ErrNotRunning, id)
}

// runningRecord is job id's saved record; ErrNotRunning when it finished.
func (m *Manager) runningRecord(ctx context.Context, id int64) (store.Job, error) {
	rec, err := m.cfg.Store.Job(ctx, id)
	if err != nil {
		return store.Job{}, err
	}
	if rec.Status != store.JobRunning {
		return store.Job{}, fmt.Errorf("%w: job %d finished already (%s)", ErrNotRunning, id, rec.Outcome)
	}
	return rec, nil
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

// Page returns one page of the jobs matching f, newest first (as store.Jobs.PageJobs): only
// the page's running jobs have their tail read.
func (m *Manager) Page(ctx context.Context, f store.JobFilter) ([]Job, error) {
	recs, err := m.cfg.Store.PageJobs(ctx, f)
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
		j.Tail = m.tail(rec.LogPath, m.tracked(rec.ID))
		j.Runtime = max(m.cfg.Clock.Now().Sub(rec.CreatedAt), 0)
	} else {
		j.Runtime = max(rec.EndedAt.Sub(rec.CreatedAt), 0)
	}
	return j
}
