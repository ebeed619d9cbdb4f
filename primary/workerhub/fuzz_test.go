package workerhub

import (
	"context"
	"encoding/binary"
	"io"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/workermeta"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
)

// The worker of the fuzz target: authenticated as id fuzzWorkerID of key fuzzWorkerKey.
const (
	fuzzWorkerKey  = "key-fuzz"
	fuzzWorkerID   = "worker-fuzz"
	fuzzCredential = "fuzz-worker-credential"
)

// scriptedStream is a worker's side of Connect as the Hub sees it: it receives the given
// messages, then the end of the stream, and records what the Hub sends.
type scriptedStream struct {
	grpc.ServerStream
	ctx  context.Context
	msgs []*workerv1.ConnectRequest

	mu   sync.Mutex
	sent []*workerv1.ConnectResponse
}

func (s *scriptedStream) Context() context.Context { return s.ctx }

func (s *scriptedStream) Recv() (*workerv1.ConnectRequest, error) {
	if len(s.msgs) == 0 {
		return nil, io.EOF
	}
	m := s.msgs[0]
	s.msgs = s.msgs[1:]
	return m, nil
}

func (s *scriptedStream) Send(m *workerv1.ConnectResponse) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, m)
	return nil
}

// noGrants knows no grant.
type noGrants struct{}

func (noGrants) Authenticate(string, response.Path) (*response.Response, bool) { return nil, false }

// sinkCall is one jobs.WorkerSink call, as a comparable record.
type sinkCall struct {
	method string
	jobs   []jobs.WorkerJobState
	id     int64
	offset int64
	data   string
	exit   jobs.WorkerJobExit
}

type recordingSink struct {
	mu    sync.Mutex
	calls []sinkCall
}

func (r *recordingSink) add(c sinkCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

func (r *recordingSink) WorkerJobs(_ context.Context, key, id string, jobs []jobs.WorkerJobState) {
	r.add(sinkCall{method: "WorkerJobs/" + key + "/" + id, jobs: jobs})
}

func (r *recordingSink) JobStarted(_ context.Context, w string, id int64) {
	r.add(sinkCall{method: "JobStarted/" + w, id: id})
}

func (r *recordingSink) JobOutput(_ context.Context, w string, id, off int64, data []byte) {
	r.add(sinkCall{method: "JobOutput/" + w, id: id, offset: off, data: string(data)})
}

func (r *recordingSink) JobFinished(_ context.Context, w string, id int64, exit jobs.WorkerJobExit) {
	r.add(sinkCall{method: "JobFinished/" + w, id: id, exit: exit})
}

// frames cuts data into messages: each is a uvarint length and that many bytes, read with
// proto.Unmarshal. Frames that are not a ConnectRequest are dropped.
func frames(data []byte) []*workerv1.ConnectRequest {
	var out []*workerv1.ConnectRequest
	for len(data) > 0 {
		n, used := binary.Uvarint(data)
		if used <= 0 || n > uint64(len(data)-used) {
			break
		}
		var m workerv1.ConnectRequest
		if proto.Unmarshal(data[used:used+int(n)], &m) == nil {
			out = append(out, &m)
		}
		data = data[used+int(n):]
	}
	return out
}

// frame is one message as frames reads it.
func frame(m *workerv1.ConnectRequest) []byte {
	b, _ := proto.Marshal(m)
	return append(binary.AppendUvarint(nil, uint64(len(b))), b...)
}

// expectedJobReport is the sink call a job message after Hello must make, decided without the
// Hub's code; ok is false when the message breaks the protocol.
func expectedJobReport(m *workerv1.ConnectRequest) (c sinkCall, ok bool) {
	exit := func(e *workerv1.JobExit) jobs.WorkerJobExit {
		// A long text is cut to maxWorkerErrorBytes, dropping a character cut in half, and
		// marked as cut.
		msg := e.GetStartError()
		if len(msg) > maxWorkerErrorBytes {
			msg = msg[:maxWorkerErrorBytes]
			for !utf8.ValidString(msg) {
				msg = msg[:len(msg)-1]
			}
			msg += "…"
		}
		return jobs.WorkerJobExit{Code: int(e.GetCode()), CodeKnown: e.GetCodeKnown(), TimedOut: e.GetTimedOut(), Cancelled: e.GetCancelled(),
			OutputLimit: e.GetOutputLimit(), StartError: msg}
	}
	worker := "/" + fuzzWorkerID
	switch ev := m.GetEvent().(type) {
	case *workerv1.ConnectRequest_JobStarted:
		return sinkCall{method: "JobStarted" + worker, id: ev.JobStarted.GetJobId()}, ev.JobStarted.GetJobId() > 0
	case *workerv1.ConnectRequest_JobOutput:
		o := ev.JobOutput
		return sinkCall{method: "JobOutput" + worker, id: o.GetJobId(), offset: o.GetOffset(), data: string(o.GetData())},
			o.GetJobId() > 0 && o.GetOffset() >= 0 && o.GetOffset() <= 1<<62 && len(o.GetData()) <= bashexec.ChunkSize
	case *workerv1.ConnectRequest_JobFinished:
		f := ev.JobFinished
		return sinkCall{method: "JobFinished" + worker, id: f.GetJobId(), exit: exit(f.GetExit())}, f.GetJobId() > 0 && f.GetExit() != nil
	}
	return sinkCall{}, false
}

// validHello decides, without the Hub's code, whether hello opens a connection, and the jobs
// it reports.
func validHello(hello *workerv1.Hello) ([]jobs.WorkerJobState, bool) {
	if hello == nil || hello.GetWorkerId() != fuzzWorkerID || hello.GetWorkerKey() != fuzzWorkerKey {
		return nil, false
	}
	u, err := url.Parse(hello.GetAgentCliUrl())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, false
	}
	held := []jobs.WorkerJobState{}
	seen := map[int64]bool{}
	for _, st := range hello.GetJobs() {
		if st.GetJobId() <= 0 || seen[st.GetJobId()] || (!st.GetRunning() && st.GetExit() == nil) {
			return nil, false
		}
		seen[st.GetJobId()] = true
		js := jobs.WorkerJobState{ID: st.GetJobId(), Running: st.GetRunning()}
		if !js.Running {
			c, _ := expectedJobReport(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobFinished{
				JobFinished: &workerv1.JobFinished{JobId: st.GetJobId(), Exit: st.GetExit()}}})
			js.Exit = c.exit
		}
		held = append(held, js)
	}
	return held, true
}

// FuzzHubConnect runs the Hub's side of a worker connection on messages decoded from fuzzed
// bytes (a Hello, then a sequence of frames), with no network: Connect reads them from a
// scripted stream. It checks that a Hello is accepted exactly when it is valid, and then
// welcomed first; that job reports reach the sink exactly as sent, in order, until the first
// message that breaks the protocol, which ends the connection with InvalidArgument; that
// command output for commands the primary does not know is ignored; and that the worker is
// gone from the Hub once the stream has ended.
func FuzzHubConnect(f *testing.F) {
	good := &workerv1.Hello{WorkerId: fuzzWorkerID, WorkerKey: fuzzWorkerKey, AgentCliUrl: "http://127.0.0.1:7431", Capacity: 2,
		Jobs: []*workerv1.JobState{{JobId: 1, Running: true}, {JobId: 2, Exit: &workerv1.JobExit{Code: 1, CodeKnown: true, StartError: "could not start: é"}}}}
	hello := func(h *workerv1.Hello) []byte {
		b, _ := proto.Marshal(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Hello{Hello: h}})
		return b
	}
	msgs := func(ms ...*workerv1.ConnectRequest) []byte {
		var out []byte
		for _, m := range ms {
			out = append(out, frame(m)...)
		}
		return out
	}
	started := func(id int64) *workerv1.ConnectRequest {
		return &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobStarted{JobStarted: &workerv1.JobStarted{JobId: id}}}
	}
	output := func(id, off int64, n int) *workerv1.ConnectRequest {
		return &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobOutput{JobOutput: &workerv1.JobOutput{JobId: id, Offset: off, Data: make([]byte, n)}}}
	}
	finished := func(id int64, e *workerv1.JobExit) *workerv1.ConnectRequest {
		return &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobFinished{JobFinished: &workerv1.JobFinished{JobId: id, Exit: e}}}
	}
	cmdOut := &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Output{Output: &workerv1.CommandOutput{CommandId: "c1", Data: []byte("x")}}}
	exited := &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Exited{Exited: &workerv1.CommandExited{CommandId: "c1", Error: "e"}}}
	long := "x" + strings.Repeat("é", maxWorkerErrorBytes) // cut inside a character

	f.Add(hello(good), msgs(started(3), output(3, 0, bashexec.ChunkSize), output(3, 1<<62, 1), finished(3, &workerv1.JobExit{StartError: long})))
	f.Add(hello(good), msgs(output(3, 0, bashexec.ChunkSize+1), started(4)))
	f.Add(hello(good), msgs(output(3, 1<<62+1, 1)))
	f.Add(hello(good), msgs(output(3, -1, 1)))
	f.Add(hello(good), msgs(started(0)))
	f.Add(hello(good), msgs(finished(5, nil)))
	f.Add(hello(good), msgs(cmdOut, exited, cmdOut, exited, started(6)))
	f.Add(hello(good), msgs(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Hello{Hello: good}}))
	f.Add(hello(good), msgs(&workerv1.ConnectRequest{}))
	f.Add(hello(good), []byte{0xff, 0xff, 0xff})
	f.Add([]byte{}, []byte{})
	for _, edit := range []func(*workerv1.Hello){
		func(h *workerv1.Hello) { h.WorkerId = "other" },
		func(h *workerv1.Hello) { h.WorkerKey = "key-other" },
		func(h *workerv1.Hello) { h.AgentCliUrl = "http://127.0.0.1:7431/path" },
		func(h *workerv1.Hello) { h.AgentCliUrl = "ftp://127.0.0.1" },
		func(h *workerv1.Hello) { h.AgentCliUrl = "http://user:pw@127.0.0.1" },
		func(h *workerv1.Hello) { h.AgentCliUrl = "https://[::1]:8/" },
		func(h *workerv1.Hello) { h.Jobs = append(h.Jobs, &workerv1.JobState{JobId: 1, Running: true}) },
		func(h *workerv1.Hello) { h.Jobs = []*workerv1.JobState{{JobId: -4, Running: true}} },
		func(h *workerv1.Hello) { h.Jobs = []*workerv1.JobState{{JobId: 9}} },
	} {
		h := proto.Clone(good).(*workerv1.Hello)
		edit(h)
		f.Add(hello(h), msgs(started(7)))
	}

	f.Fuzz(func(t *testing.T, helloBytes, rest []byte) {
		var first workerv1.ConnectRequest
		if proto.Unmarshal(helloBytes, &first) != nil {
			return
		}
		script := append([]*workerv1.ConnectRequest{&first}, frames(rest)...)
		creds := NewCredentials()
		creds.Add(fuzzWorkerKey, fuzzCredential)
		sink := &recordingSink{}
		h := New(Config{Credentials: creds})
		svc, err := NewService(ServiceConfig{Hub: h, Jobs: sink, Grants: noGrants{}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(metadata.NewIncomingContext(context.Background(),
			metadata.Pairs(workermeta.CredentialKey, fuzzCredential, workermeta.IDKey, fuzzWorkerID)))
		defer cancel()
		stream := &scriptedStream{ctx: ctx, msgs: append([]*workerv1.ConnectRequest(nil), script...)}

		err = faultgrpc.Status(ctx, nil, "", svc.Connect(stream)) // as the server's interceptor maps it

		helloJobs, helloOK := validHello(first.GetHello())
		if !helloOK {
			if code := status.Code(err); code != codes.InvalidArgument && code != codes.PermissionDenied {
				t.Fatalf("Hello %v: Connect returns %v, want InvalidArgument or PermissionDenied", &first, err)
			}
			if len(stream.sent) != 0 || len(sink.calls) != 0 {
				t.Fatalf("Hello %v is refused, but the Hub sent %d messages and made %d sink calls", &first, len(stream.sent), len(sink.calls))
			}
			return
		}
		want := []sinkCall{{method: "WorkerJobs/" + fuzzWorkerKey + "/" + fuzzWorkerID, jobs: helloJobs}}
		violation := false
		for _, m := range script[1:] {
			switch m.GetEvent().(type) {
			case *workerv1.ConnectRequest_Output:
				violation = len(m.GetOutput().GetData()) > bashexec.ChunkSize
			case *workerv1.ConnectRequest_Exited:
			default:
				c, ok := expectedJobReport(m)
				if ok {
					want = append(want, c)
				}
				violation = !ok
			}
			if violation {
				break
			}
		}
		switch code := status.Code(err); {
		case violation && code != codes.InvalidArgument:
			t.Fatalf("a protocol violation ends Connect with %v, want InvalidArgument", err)
		case !violation && err != nil:
			t.Fatalf("a valid connection ends with %v", err)
		}
		if len(stream.sent) != 1 || stream.sent[0].GetWelcome().GetSessionId() == "" {
			t.Fatalf("the Hub sent %v, want exactly one Welcome with a session", stream.sent)
		}
		if len(h.Workers()) != 0 {
			t.Fatalf("worker still connected after its stream ended: %v", h.Workers())
		}
		waitDispatched(t, h)
		if !reflect.DeepEqual(sink.calls, want) {
			t.Fatalf("sink calls:\n%+v\nwant:\n%+v", sink.calls, want)
		}
	})
}

// waitDispatched waits until the connection's job reports have all reached the sink: its
// dispatcher removes itself from the Hub's chain when it is done.
func waitDispatched(t *testing.T, h *Hub) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		n := len(h.jobChain)
		h.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("job reports were not dispatched within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
