package workerhub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/primary/jobs"
)

// errProtocol marks a worker that broke the protocol; its connection is ended.
var errProtocol = errors.New("worker protocol violation")

// errConnectionEnded: the connection was replaced or the primary is stopping.
var errConnectionEnded = errors.New("worker connection ended")

// conn is one connected worker.
type conn struct {
	ident    Identity
	session  string
	since    time.Time // when the connection was accepted
	proxyURL string
	capacity int
	// The worker's command timeouts (zero when it did not say), and whether it answers Ping.
	defaultTimeout, maxTimeout time.Duration
	answersPing                bool
	// heard is when the worker last sent anything, as a sinceAccepted duration; pings counts
	// the Pings sent; away is set when the connection ended because the worker went silent.
	heard atomic.Int64
	pings atomic.Uint64
	away  atomic.Bool
	// lastPicked is when a response was last bound to this connection, in the Hub's picks;
	// 0 for none. Guarded by the Hub's mu.
	lastPicked uint64
	stream     workerv1.WorkerService_ConnectServer
	cancel     context.CancelFunc
	gone       chan struct{}   // closed when the connection has ended
	done       <-chan struct{} // closed when the connection is replaced or the primary stops

	// Job reports go through jobEvents (closed by the receive loop) to the connection's
	// dispatcher, which calls sink after the dispatcher of the worker's previous connection
	// (prevJobs) has finished, and closes jobsDone when it has.
	sink      jobs.WorkerSink
	jobEvents chan jobEvent
	prevJobs  <-chan struct{}
	jobsDone  chan struct{}
	// reported is closed once the sink has taken the worker's first report (WorkerJobs): no
	// job is sent before, so the jobs that report is judged against (which the worker holds,
	// which it lost) never include one sent on this connection after its Hello.
	reported chan struct{}

	sendMu sync.Mutex // gRPC streams take one sender at a time

	mu       sync.Mutex
	commands map[string]*remoteCommand
}

type chunk struct {
	stream workerv1.OutputStream
	data   []byte
}

// remoteCommand is a command running on the worker. chunks has room for the command's whole
// output credit, so the receive loop never blocks on a slow consumer.
type remoteCommand struct {
	id     string
	chunks chan chunk
	exited chan *workerv1.CommandExited
}

func (c *conn) send(msg *workerv1.ConnectResponse) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.stream.Send(msg)
}

func (c *conn) load() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.commands)
}

func (c *conn) add(rc *remoteCommand) {
	c.mu.Lock()
	c.commands[rc.id] = rc
	c.mu.Unlock()
}

func (c *conn) forget(id string) {
	c.mu.Lock()
	delete(c.commands, id)
	c.mu.Unlock()
}

func (c *conn) command(id string) *remoteCommand {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commands[id]
}

// receive reads the worker's messages until the stream ends. Command output is queued per
// command within its credit and job reports for the dispatcher, so the loop never waits on a
// command's consumer.
func (c *conn) receive() error {
	defer close(c.jobEvents)
	for {
		msg, err := c.stream.Recv()
		if err != nil {
			return err
		}
		c.noteHeard()
		switch ev := msg.GetEvent().(type) {
		case *workerv1.ConnectRequest_Output:
			if len(ev.Output.GetData()) > bashexec.ChunkSize {
				return fmt.Errorf("%w: an output chunk over %d bytes", errProtocol, bashexec.ChunkSize)
			}
			rc := c.command(ev.Output.GetCommandId())
			if rc == nil {
				continue // output of a command the primary already gave up on
			}
			select {
			case rc.chunks <- chunk{stream: ev.Output.GetStream(), data: ev.Output.GetData()}:
			default:
				return fmt.Errorf("%w: output of %s beyond its credit", errProtocol, rc.id)
			}
		case *workerv1.ConnectRequest_Exited:
			if rc := c.command(ev.Exited.GetCommandId()); rc != nil {
				select {
				case rc.exited <- ev.Exited:
				default:
					return fmt.Errorf("%w: %s exited twice", errProtocol, rc.id)
				}
			}
		case *workerv1.ConnectRequest_Pong:
			// Being heard is all a Pong says.
		case *workerv1.ConnectRequest_JobStarted, *workerv1.ConnectRequest_JobOutput, *workerv1.ConnectRequest_JobFinished:
			report, err := c.jobReport(msg)
			if err != nil {
				return err
			}
			if err := c.queueJob(report); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: unexpected message after Hello", errProtocol)
		}
	}
}
