package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// InsertJob implements store.Tx.
func (t *tx) InsertJob(_ context.Context, j store.Job) (int64, error) {
	var err error
	if j.Run, j.Parking, err = jobRecords(j); err != nil {
		return 0, err
	}
	j.ID = t.s.jobs.nextID()
	j.CreatedAt, j.EndedAt, j.ExitCode = stamp(j.CreatedAt), stamp(j.EndedAt), exitCode(j.ExitCode)
	t.s.jobs.insert(t, j)
	t.indexJob("", j)
	return j.ID, nil
}

// indexJob keeps runningJobs when a job's status changes from prev (empty: a new job) to
// next's.
func (t *tx) indexJob(prev store.JobStatus, next store.Job) {
	switch {
	case prev != store.JobRunning && next.Status == store.JobRunning:
		put(t, t.s.runningJobs, next.ID, true)
	case prev == store.JobRunning && next.Status != store.JobRunning:
		remove(t, t.s.runningJobs, next.ID)
	}
}

// UpdateJob implements store.Tx.
func (t *tx) UpdateJob(_ context.Context, from store.JobStatus, j store.Job) (bool, error) {
	run, parking, err := jobRecords(j)
	if err != nil {
		return false, err
	}
	stored, ok := t.s.jobs.get(j.ID)
	if !ok || stored.Status != from {
		return false, nil
	}
	stored.Run, stored.Parking = run, parking
	stored.LogPath, stored.Status, stored.WorkerID, stored.CancelRequested = j.LogPath, j.Status, j.WorkerID, j.CancelRequested
	stored.Pid, stored.ProcStart, stored.EndedAt = j.Pid, j.ProcStart, stamp(j.EndedAt)
	stored.Outcome, stored.ExitCode, stored.Tail = j.Outcome, exitCode(j.ExitCode), j.Tail
	t.s.jobs.set(t, j.ID, stored)
	t.indexJob(from, stored)
	return true, nil
}

// QueueEndJob implements store.Tx: written at once.
func (t *tx) QueueEndJob(_ context.Context, id int64, from, to store.JobStatus, at time.Time, r store.JobResult) func() (bool, error) {
	run, _, err := jobRecords(store.Job{JobResult: r})
	if err != nil {
		return func() (bool, error) { return false, err }
	}
	stored, ok := t.s.jobs.get(id)
	if !ok {
		err := t.unmatch(fmt.Sprintf("job %d", id))
		return func() (bool, error) { return false, err }
	}
	if stored.Status != from {
		return func() (bool, error) { return false, nil }
	}
	stored.Status, stored.EndedAt, stored.Run, stored.Parking = to, stamp(at), run, nil
	stored.Outcome, stored.ExitCode, stored.Tail = r.Outcome, exitCode(r.ExitCode), r.Tail
	t.s.jobs.set(t, id, stored)
	t.indexJob(from, stored)
	return func() (bool, error) { return true, nil }
}

// exitCode copies an exit code (nil when unknown).
func exitCode(code *int) *int {
	if code == nil {
		return nil
	}
	c := *code
	return &c
}

// jobRecords are copies of j's engine run and parking record, held to the limits the SQL
// drivers' columns have: encoded and decoded again, so nothing stored shares memory with the
// caller's.
func jobRecords(j store.Job) (*store.EngineRun, *store.Parking, error) {
	run, err := store.EncodeEngineRun(j.Run)
	if err != nil {
		return nil, nil, err
	}
	parking, err := store.EncodeParking(j.Parking)
	if err != nil {
		return nil, nil, err
	}
	return store.DecodeEngineRun(run), store.DecodeParking(parking), nil
}

// jobOut is a stored job as a reader gets it: its own exit code, and the log directory that
// its log path names (the SQL drivers store the path only).
func jobOut(j *store.Job) store.Job {
	out := *j
	out.ExitCode = exitCode(j.ExitCode)
	out.Run, out.Parking, _ = jobRecords(*j) // stored ones passed the limits
	out.LogDir = filepath.Dir(j.LogPath)
	return out
}

// Job implements store.Reader.
func (v view) Job(_ context.Context, id int64) (store.Job, error) {
	defer v.read()()
	return v.s.jobs.read(id, "job", jobOut)
}

// ListJobs implements store.Reader. The running jobs, which every creation counts, are
// read through their index.
func (v view) ListJobs(_ context.Context, status store.JobStatus) ([]store.Job, error) {
	defer v.read()()
	if status != store.JobRunning {
		return newestFirst(&v.s.jobs, 0, 0, func(j *store.Job) bool { return equalOrAny(j.Status, status) }, jobOut), nil
	}
	ids := slices.Collect(maps.Keys(v.s.runningJobs))
	slices.SortFunc(ids, func(a, b int64) int { return cmp.Compare(b, a) })
	var out []store.Job
	for _, id := range ids {
		out = append(out, jobOut(&v.s.jobs.rows[id-1]))
	}
	return out, nil
}

// PageJobs implements store.Reader.
func (v view) PageJobs(_ context.Context, f store.JobFilter) ([]store.Job, error) {
	defer v.read()()
	return newestFirst(&v.s.jobs, f.BeforeID, f.Limit, func(j *store.Job) bool {
		return equalOrAny(j.Status, f.Status) && inConversation(j.Channel, j.Thread, f.Channel, f.Thread)
	}, jobOut), nil
}
