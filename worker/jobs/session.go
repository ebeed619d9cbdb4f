package jobs

import (
	"os"
	"sync"
	"time"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/bashexec"
)

// Session is the jobs' side of one connection to the primary: it handles the primary's job
// messages and sends each job's log and result on it. Per job, one streamer goroutine at a time
// sends everything about that job, so its messages keep their order.
type Session struct {
	m    *Manager
	send func(*workerv1.ConnectRequest) error

	// Guarded by m.mu.
	open, closed bool
	// aware: the primary has sent a job message on this connection, so it handles job reports.
	// Until then a job's end that nobody asked about waits in pending: a primary that never
	// sends job messages never receives one either.
	aware    bool
	pending  map[int64]bool
	reported map[int64]bool // jobs Hello reported as running, until Open
	streams  map[int64]*streamer
	wg       sync.WaitGroup
}

// streamer sends one job's log from offset (none when offset < 0), then its JobFinished once
// it has ended. announce makes it send JobStarted first.
type streamer struct {
	id       int64
	offset   int64
	announce bool
	stop     chan struct{} // closed when it is replaced or the session closes
	done     chan struct{}
}

// Connect starts the session of a new connection whose messages go through send, and returns
// the jobs for its Hello. Until Open (the primary's Welcome) nothing is sent.
func (m *Manager) Connect(send func(*workerv1.ConnectRequest) error) (*Session, []*workerv1.JobState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.session; old != nil {
		old.detachLocked()
	}
	s := &Session{m: m, send: send, pending: make(map[int64]bool), reported: make(map[int64]bool), streams: make(map[int64]*streamer)}
	states := m.statesLocked()
	for _, st := range states {
		if st.GetRunning() {
			s.reported[st.GetJobId()] = true
		}
	}
	if !m.closed {
		m.session = s
	}
	return s, states
}

// Open is called once the primary has welcomed the connection. A job that Hello reported as
// running and that has finished since is reported now, or once the primary sends a job message.
func (s *Session) Open() {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.closed {
		return
	}
	s.open = true
	for id := range s.reported {
		if j := s.m.jobs[id]; j != nil && j.rec.State == stateFinished {
			s.finishedLocked(id)
		}
	}
	s.reported = nil
}

// Close stops sending on the connection and waits for the streamers. The jobs run on.
func (s *Session) Close() {
	s.m.mu.Lock()
	s.detachLocked()
	s.m.mu.Unlock()
	s.wg.Wait()
}

func (s *Session) detachLocked() {
	s.closed = true
	for id, st := range s.streams {
		close(st.stop)
		delete(s.streams, id)
	}
	if s.m.session == s {
		s.m.session = nil
	}
}

// Start handles StartJob.
func (s *Session) Start(req *workerv1.StartJob) {
	s.m.start(s, req)
	s.markAware()
}

// Cancel handles CancelJob.
func (s *Session) Cancel(id int64) {
	s.m.cancel(id)
	s.markAware()
}

// Ack handles AckJob.
func (s *Session) Ack(id int64) {
	s.m.ack(id)
	s.markAware()
}

// Attach handles AttachJob: the job's log is sent from offset, then its end. It replaces any
// stream of the job already running on this connection.
func (s *Session) Attach(id, offset int64) {
	s.m.mu.Lock()
	if s.m.jobs[id] == nil {
		s.m.log.Info("AttachJob for a job not held ignored", "job", id)
	} else {
		s.streamLocked(id, max(offset, 0), false)
	}
	s.m.mu.Unlock()
	s.markAware()
}

// markAware records that the primary handles job messages and sends the ends held back.
// Handlers call it after acting, so a job just attached or acknowledged is not reported twice.
func (s *Session) markAware() {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.aware {
		return
	}
	s.aware = true
	for id := range s.pending {
		if j := s.m.jobs[id]; j != nil && j.rec.State == stateFinished {
			s.finishedLocked(id)
		}
	}
	s.pending = nil
}

// finishedLocked reports a job's end: a streamer of the job already sends it after the log.
func (s *Session) finishedLocked(id int64) {
	switch {
	case !s.open || s.closed || s.streams[id] != nil:
	case !s.aware:
		s.pending[id] = true
	default:
		s.streamLocked(id, -1, false)
	}
}

// dropLocked stops streaming an acknowledged job.
func (s *Session) dropLocked(id int64) {
	if st := s.streams[id]; st != nil {
		close(st.stop)
		delete(s.streams, id)
	}
}

// streamLocked starts a streamer for job id, after the one it replaces has returned.
func (s *Session) streamLocked(id, offset int64, announce bool) {
	if s.closed || !s.open {
		return
	}
	st := &streamer{id: id, offset: offset, announce: announce, stop: make(chan struct{}), done: make(chan struct{})}
	prev := s.streams[id]
	if prev != nil {
		close(prev.stop)
	}
	s.streams[id] = st
	s.wg.Go(func() {
		defer close(st.done)
		if prev != nil {
			<-prev.done
		}
		s.stream(st)
		s.m.mu.Lock()
		if s.streams[id] == st {
			delete(s.streams, id)
		}
		s.m.mu.Unlock()
	})
}

// stream sends the job's log as it grows, polling, and its JobFinished once it has ended and
// the log written until then is sent.
func (s *Session) stream(st *streamer) {
	if st.announce && s.send(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobStarted{
		JobStarted: &workerv1.JobStarted{JobId: st.id}}}) != nil {
		return
	}
	var log *os.File
	defer func() {
		if log != nil {
			log.Close()
		}
	}()
	buf := make([]byte, bashexec.ChunkSize)
	tick := time.NewTicker(s.m.cfg.Poll)
	defer tick.Stop()
	for {
		exit, held := s.m.exitOf(st.id) // read before the log: what it wrote before it ended is sent
		if !held {
			return
		}
		if st.offset >= 0 {
			if log == nil {
				log, _ = os.Open(s.m.logPath(st.id)) // none yet: nothing to send
			}
			if log != nil && !s.sendLog(st, log, buf) {
				return
			}
		}
		if exit != nil {
			select {
			case <-st.stop:
				return // replaced: the next streamer reports the end
			default:
			}
			_ = s.send(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobFinished{
				JobFinished: &workerv1.JobFinished{JobId: st.id, Exit: exit.proto()}}})
			return
		}
		select {
		case <-st.stop:
			return
		case <-tick.C:
		}
	}
}

// sendLog sends what the log holds beyond st.offset. It returns false when the streamer must
// stop (replaced, closed, or the connection failed).
func (s *Session) sendLog(st *streamer, log *os.File, buf []byte) bool {
	for {
		select {
		case <-st.stop:
			return false
		default:
		}
		n, err := log.ReadAt(buf, st.offset)
		if n > 0 {
			msg := &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobOutput{JobOutput: &workerv1.JobOutput{
				JobId: st.id, Offset: st.offset, Data: append([]byte(nil), buf[:n]...)}}}
			if s.send(msg) != nil {
				return false
			}
			st.offset += int64(n)
		}
		if err != nil || n < len(buf) {
			return true // at the end of what is written so far
		}
	}
}
