package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/turncli/turncli/primary/mcpbridge"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/workerhub"
)

// Sources are what the collectors read at scrape time. Each is an engine's own count or
// snapshot; the store is read for the records that wait for someone.
type Sources struct {
	Responses interface{ Stats() response.Stats }
	Workers   interface{ Stats() []workerhub.KeyStats }
	Jobs      interface{ FinishedCount() int64 }
	Store     PendingReader
	// MCPServers are the mounted MCP servers, named as configured.
	MCPServers []MCPServer
	// Now is the clock the ages of pending records are measured by (time.Now when nil).
	Now func() time.Time
}

// PendingReader is the part of the store the collectors read.
type PendingReader interface {
	ListJobs(ctx context.Context, status store.JobStatus) ([]store.Job, error)
	ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]store.Approval, error)
	ListCallApprovals(ctx context.Context, f store.CallApprovalFilter) ([]store.CallApproval, error)
	ListPrompts(ctx context.Context, f store.PromptFilter) ([]store.Prompt, error)
	ListQuestionRequests(ctx context.Context, f store.QuestionFilter) ([]store.QuestionRequest, error)
	PendingContinuations(ctx context.Context, after int64, limit int) ([]store.Continuation, error)
}

// MCPServer is a mounted MCP server as the collectors see it.
type MCPServer interface {
	Name() string
	Restarts() int64
	Skipped() []mcpbridge.SkippedTool
}

// ScrapeTimeout bounds the store reads of one scrape.
const ScrapeTimeout = 5 * time.Second

// Watch registers the collectors that read src at every scrape.
func (m *Metrics) Watch(src Sources) {
	if src.Now == nil {
		src.Now = time.Now
	}
	m.Registry.MustRegister(&engines{src: src})
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(ns+"_"+name, help, labels, nil)
}

var (
	responsesOpen = desc("responses_open", "Responses open now.")
	windowsOpen   = desc("windows_open", "Windows of open responses whose command runs or drains.")
	receiptsHeld  = desc("receipts_held", "Receipts the open responses hold.")
	parkedWaits   = desc("agent_cli_parked_waits", "Long polls of the Agent CLI waiting for a receipt to become terminal.")

	workersConnected = desc("workers_connected", "Workers connected now, by worker key.", "key")
	workersCapacity  = desc("workers_capacity_commands", "Sum of the declared command capacities of the connected workers, by worker key (a worker without a limit adds nothing).", "key")
	workersInFlight  = desc("workers_commands_in_flight", "Commands running on the connected workers, by worker key.", "key")

	jobsRunning  = desc("jobs_running", "Background jobs recorded as running, on the primary and on workers.")
	jobsFinished = desc("jobs_finished_total", "Background jobs this primary finished (saved a result for) since it started.")

	pendingNow    = desc("interaction_pending", "Records waiting for a person, by control: approval (background commands), call_approval, prompt, question.", "control")
	pendingOldest = desc("interaction_pending_oldest_age_seconds", "Age of the oldest record waiting for a person, by control; 0 when none waits.", "control")

	contUnacked = desc("continuations_unacknowledged", "Continuations the runtime has not acknowledged.")
	contOldest  = desc("continuations_unacknowledged_oldest_age_seconds", "Age of the oldest unacknowledged continuation; 0 when none is.")

	mcpRestarts = desc("mcp_server_restarts_total", "Times a mounted MCP server was started again after its session ended, by server.", "server")
	mcpSkipped  = desc("mcp_server_tools_skipped", "Tools of a mounted MCP server's list that its toolkit left out at its last load, by server and reason (invalid_name, invalid_schema, duplicate, invalid); 0 before the first load. The primary's log names each tool.", "server", "reason")
)

// engines is the collector of everything read at scrape time.
type engines struct{ src Sources }

func (e *engines) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{responsesOpen, windowsOpen, receiptsHeld, parkedWaits, workersConnected, workersCapacity,
		workersInFlight, jobsRunning, jobsFinished, pendingNow, pendingOldest, contUnacked, contOldest, mcpRestarts, mcpSkipped} {
		ch <- d
	}
}

func (e *engines) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	st := e.src.Responses.Stats()
	gauge(responsesOpen, float64(st.Open))
	gauge(windowsOpen, float64(st.Windows))
	gauge(receiptsHeld, float64(st.Receipts))
	gauge(parkedWaits, float64(st.ParkedWaits))
	for _, ks := range e.src.Workers.Stats() {
		gauge(workersConnected, float64(ks.Connections), ks.Key)
		gauge(workersCapacity, float64(ks.Capacity), ks.Key)
		gauge(workersInFlight, float64(ks.InFlight), ks.Key)
	}
	ch <- prometheus.MustNewConstMetric(jobsFinished, prometheus.CounterValue, float64(e.src.Jobs.FinishedCount()))
	for _, s := range e.src.MCPServers {
		ch <- prometheus.MustNewConstMetric(mcpRestarts, prometheus.CounterValue, float64(s.Restarts()), s.Name())
		skipped := map[mcpbridge.SkipReason]int{}
		for _, tool := range s.Skipped() {
			skipped[tool.Reason]++
		}
		for _, reason := range mcpbridge.SkipReasons {
			gauge(mcpSkipped, float64(skipped[reason]), s.Name(), string(reason))
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	e.collectStore(ctx, ch, gauge)
}

// collectStore reads the records that wait: a failed read is reported as an invalid metric
// for its series, and the others are still collected.
func (e *engines) collectStore(ctx context.Context, ch chan<- prometheus.Metric, gauge func(*prometheus.Desc, float64, ...string)) {
	db, now := e.src.Store, e.src.Now()
	if running, err := db.ListJobs(ctx, store.JobRunning); err != nil {
		ch <- prometheus.NewInvalidMetric(jobsRunning, err)
	} else {
		gauge(jobsRunning, float64(len(running)))
	}
	pending := func(control string, n int, oldest time.Time, err error) {
		if err != nil {
			ch <- prometheus.NewInvalidMetric(pendingNow, err)
			return
		}
		gauge(pendingNow, float64(n), control)
		gauge(pendingOldest, age(now, oldest), control)
	}
	n, oldest, err := countNewestFirst(func(before int64) ([]store.Approval, error) {
		return db.ListApprovals(ctx, store.ApprovalFilter{Status: store.ApprovalPending, BeforeID: before, Limit: pageSize})
	}, func(a store.Approval) (int64, time.Time) { return a.ID, a.CreatedAt })
	pending("approval", n, oldest, err)
	n, oldest, err = countNewestFirst(func(before int64) ([]store.CallApproval, error) {
		return db.ListCallApprovals(ctx, store.CallApprovalFilter{Status: store.CallApprovalWaiting, BeforeID: before, Limit: pageSize})
	}, func(a store.CallApproval) (int64, time.Time) { return a.ID, a.CreatedAt })
	pending("call_approval", n, oldest, err)
	n, oldest, err = countNewestFirst(func(before int64) ([]store.Prompt, error) {
		return db.ListPrompts(ctx, store.PromptFilter{Status: store.PromptPending, BeforeID: before, Limit: pageSize})
	}, func(p store.Prompt) (int64, time.Time) { return p.ID, p.CreatedAt })
	pending("prompt", n, oldest, err)
	n, oldest, err = countNewestFirst(func(before int64) ([]store.QuestionRequest, error) {
		return db.ListQuestionRequests(ctx, store.QuestionFilter{Status: store.QuestionPending, BeforeID: before, Limit: pageSize})
	}, func(q store.QuestionRequest) (int64, time.Time) { return q.ID, q.CreatedAt })
	pending("question", n, oldest, err)

	n, oldest, err = countContinuations(ctx, db)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(contUnacked, err)
		return
	}
	gauge(contUnacked, float64(n))
	gauge(contOldest, age(now, oldest))
}

// pageSize is the store's largest page; maxPages bounds what one scrape reads of a list.
const (
	pageSize = 1000
	maxPages = 100
)

// countNewestFirst counts the records of a list the store returns newest first, page by page,
// and returns the creation time of the oldest.
func countNewestFirst[T any](page func(before int64) ([]T, error), key func(T) (int64, time.Time)) (int, time.Time, error) {
	var n int
	var oldest time.Time
	before := int64(0)
	for range maxPages {
		rows, err := page(before)
		if err != nil {
			return 0, time.Time{}, err
		}
		n += len(rows)
		if len(rows) > 0 {
			before, oldest = key(rows[len(rows)-1])
		}
		if len(rows) < pageSize {
			break
		}
	}
	return n, oldest, nil
}

// countContinuations counts the unacknowledged continuations (listed oldest first).
func countContinuations(ctx context.Context, db PendingReader) (int, time.Time, error) {
	var n int
	var oldest time.Time
	after := int64(0)
	for range maxPages {
		rows, err := db.PendingContinuations(ctx, after, pageSize)
		if err != nil {
			return 0, time.Time{}, err
		}
		if n == 0 && len(rows) > 0 {
			oldest = rows[0].CreatedAt
		}
		n += len(rows)
		if len(rows) > 0 {
			after = rows[len(rows)-1].ID
		}
		if len(rows) < pageSize {
			break
		}
	}
	return n, oldest, nil
}

// age is how old a record created at t is; 0 for none.
func age(now, t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return max(now.Sub(t).Seconds(), 0)
}
