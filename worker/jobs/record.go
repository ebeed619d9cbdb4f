package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
)

// state is where a job is in its life.
type state string

const (
	// stateStarting: recorded, not yet known to have launched. Found so after a restart, it is
	// named by its identity file and taken over, or given up (its command never runs); it is
	// never launched again.
	stateStarting state = "starting"
	stateRunning  state = "running"
	stateFinished state = "finished"
)

// record is a job's durable record, <id>.json. It holds what finding, supervising and
// reporting the job need, never its command's secrets (the grant and the environment).
type record struct {
	ID    int64 `json:"id"`
	State state `json:"state"`
	// Pid and ProcStart name the job's process for good (a recycled pid is never taken for it).
	Pid       int    `json:"pid,omitempty"`
	ProcStart uint64 `json:"proc_start,omitempty"`
	// StartedAt is when it was launched; Deadline its ceiling; Grace the TERM→KILL delay.
	StartedAt time.Time     `json:"started_at"`
	Deadline  time.Time     `json:"deadline"`
	Grace     time.Duration `json:"grace_ns"`
	// Exit is set once finished.
	Exit *Exit `json:"exit,omitempty"`
	// unreadable: loaded from a record that could not be read; it names no launch to settle
	// and no ceiling to supervise by.
	unreadable bool
}

// Exit is how a job ended.
type Exit struct {
	// Code is the exit status (128+N for signal N), valid when CodeKnown.
	Code      int  `json:"code"`
	CodeKnown bool `json:"code_known"`
	TimedOut  bool `json:"timed_out,omitempty"`
	Cancelled bool `json:"cancelled,omitempty"`
	// OutputLimit: stopped because its log passed jobproc.DefaultMaxLogBytes.
	OutputLimit bool `json:"output_limit,omitempty"`
	// StartError says why the job could not start; empty when it started.
	StartError string `json:"start_error,omitempty"`
}

func (e Exit) proto() *workerv1.JobExit {
	return &workerv1.JobExit{Code: int32(e.Code), CodeKnown: e.CodeKnown, TimedOut: e.TimedOut, Cancelled: e.Cancelled, OutputLimit: e.OutputLimit, StartError: e.StartError}
}

// Paths of a job's files.
func (m *Manager) recordPath(id int64) string { return m.path(id, ".json") }
func (m *Manager) logPath(id int64) string    { return m.path(id, ".log") }
func (m *Manager) statusPath(id int64) string { return m.path(id, ".status") }

// identityPath is where the job's process writes its pid and start time before its command
// runs (see jobproc.Settle).
func (m *Manager) identityPath(id int64) string { return m.path(id, ".proc") }

func (m *Manager) path(id int64, ext string) string {
	return filepath.Join(m.cfg.Dir, strconv.FormatInt(id, 10)+ext)
}

// save writes rec atomically (temporary file, fsync, rename, fsync of the directory), so a
// crash leaves the old record or the new one, never a torn one.
func (m *Manager) save(rec record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(m.cfg.Dir, strconv.FormatInt(rec.ID, 10)+".*.tmp") // 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, m.recordPath(rec.ID))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("jobs: save the record of job %d: %w", rec.ID, err)
	}
	return syncDir(m.cfg.Dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// remove deletes a job's files, its record first: a crash in between leaves only files that the
// next load clears.
func (m *Manager) remove(id int64) error {
	var errs []error
	for _, p := range []string{m.recordPath(id), m.logPath(id), m.statusPath(id), m.identityPath(id)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// loadRecords reads every record in the directory and removes what belongs to no record: a
// half-written temporary record, or the log, status and identity of a job whose record was
// deleted. A
// record that cannot be read is taken as one whose process is unknown (as if it was starting),
// so the job is still reported, with its status file's code if any, rather than silently lost.
func (m *Manager) loadRecords() ([]record, error) {
	entries, err := os.ReadDir(m.cfg.Dir)
	if err != nil {
		return nil, err
	}
	recorded := make(map[int64]bool)
	var recs []record
	for _, e := range entries {
		id, ok := jobID(e.Name(), ".json")
		if !ok {
			continue
		}
		recorded[id] = true
		rec, err := m.readRecord(id)
		if err != nil {
			m.log.Error("job record unreadable; its process cannot be found again", "job", id, "err", err)
			rec = record{ID: id, State: stateStarting, unreadable: true}
		}
		recs = append(recs, rec)
	}
	for _, e := range entries {
		name := e.Name()
		var orphan bool
		switch {
		case strings.HasSuffix(name, ".tmp"):
			orphan = true
		case strings.HasSuffix(name, ".log"), strings.HasSuffix(name, ".status"), strings.HasSuffix(name, ".proc"):
			id, ok := jobID(name, filepath.Ext(name))
			orphan = ok && !recorded[id]
		}
		if orphan {
			if err := os.Remove(filepath.Join(m.cfg.Dir, name)); err != nil {
				m.log.Warn("stale job file not removed", "file", name, "err", err)
			}
		}
	}
	return recs, nil
}

func (m *Manager) readRecord(id int64) (record, error) {
	b, err := os.ReadFile(m.recordPath(id))
	if err != nil {
		return record{}, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return record{}, err
	}
	if rec.ID != id {
		return record{}, fmt.Errorf("record names job %d", rec.ID)
	}
	switch rec.State {
	case stateStarting, stateRunning:
	case stateFinished:
		if rec.Exit == nil {
			rec.Exit = &Exit{}
		}
	default:
		return record{}, fmt.Errorf("unknown state %q", rec.State)
	}
	return rec, nil
}

// jobID parses "<id><ext>" with a positive decimal id.
func jobID(name, ext string) (int64, bool) {
	s, ok := strings.CutSuffix(name, ext)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0 && strconv.FormatInt(id, 10) == s
}
