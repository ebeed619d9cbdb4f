package operator_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/events"
)

// watch starts a watch and returns once its first, empty, message arrived: the subscription
// is in place from then on.
func watch(ctx context.Context, t *testing.T, client operatorv1.OperatorServiceClient) grpc.ServerStreamingClient[operatorv1.WatchEventsResponse] {
	t.Helper()
	stream, err := client.WatchEvents(ctx, &operatorv1.WatchEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatalf("first message: %v", err)
	}
	if first.GetEvent() != nil {
		t.Fatalf("first message = %v, want no event", first)
	}
	return stream
}

func recvEvent(t *testing.T, stream grpc.ServerStreamingClient[operatorv1.WatchEventsResponse]) *operatorv1.Event {
	t.Helper()
	msg, err := stream.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if msg.GetEvent() == nil {
		t.Fatalf("message %v carries no event", msg)
	}
	return msg.GetEvent()
}

// wantEnded waits for the server's watch handler to return, with code.
func wantEnded(t *testing.T, e *apiEnv, code codes.Code) {
	t.Helper()
	if err := <-e.streamEnded; status.Code(err) != code {
		t.Fatalf("the watch ended with %v, want %v", err, code)
	}
}

func TestWatchEvents(t *testing.T) {
	t.Run("StreamsEventsPublishedAfterItBeganInOrder", func(t *testing.T) {
		e := startAPI(t)
		e.bus.Publish("approval.created", "approval/1", map[string]any{"id": 1}) // before the watch: never sent
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stream := watch(ctx, t, e.member)
		e.bus.Publish("approval.created", "approval/2", map[string]any{"id": 2, "status": "pending"})
		e.bus.Publish("job.finished", "job/3", nil)
		e.bus.Publish("odd.data", "odd/1", map[string]any{"ch": make(chan int)}) // not JSON: sent as null
		e.bus.Publish("progress.updated", "response/r1", []string{"a"})
		var got []*operatorv1.Event
		for range 4 {
			got = append(got, recvEvent(t, stream))
		}
		want := []struct{ kind, subject, data string }{
			{"approval.created", "approval/2", `{"id":2,"status":"pending"}`},
			{"job.finished", "job/3", "null"},
			{"odd.data", "odd/1", "null"},
			{"progress.updated", "response/r1", `["a"]`},
		}
		for i, w := range want {
			ev := got[i]
			if ev.GetKind() != w.kind || ev.GetSubject() != w.subject || ev.GetDataJson() != w.data || ev.GetAt() == nil ||
				ev.GetSeq() != got[0].GetSeq()+uint64(i) {
				t.Fatalf("event %d = %v, want %+v with seq %d", i, ev, w, got[0].GetSeq()+uint64(i))
			}
		}
		if got[0].GetSeq() != 2 {
			t.Fatalf("first event's seq %d, want 2 (the one published before the watch is not sent)", got[0].GetSeq())
		}
	})

	t.Run("LaggingWatcherGetsAGapInPlaceOfWhatItLost", func(t *testing.T) {
		e := startAPI(t)
		// Fixed 64 KiB flow-control windows: a watcher that does not read holds up its stream
		// after a few large events, so the rest queue on the bus and overflow its buffer.
		conn := dialBufconn(t, e.lis, e.memberToken, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stream := watch(ctx, t, operatorv1.NewOperatorServiceClient(conn))
		const flood = 600
		pad := strings.Repeat("x", 16<<10)
		for i := range flood {
			e.bus.Publish("test.flood", "flood/"+strconv.Itoa(i), map[string]any{"n": i, "pad": pad})
		}
		// Read everything, publishing a tick after each message: a tick published once the
		// buffer has room brings a gap marker, then (room permitting) itself.
		var got []*operatorv1.Event
		for {
			ev := recvEvent(t, stream)
			got = append(got, ev)
			if ev.GetKind() == "test.tick" {
				break
			}
			e.bus.Publish("test.tick", "", nil)
		}
		// In order, and every loss marked: consecutive events have consecutive seqs, and an
		// event after a gap marker has at least the marker's seq.
		gaps, delivered := 0, 0
		for i, ev := range got {
			switch ev.GetKind() {
			case events.KindGap:
				gaps++
				if ev.GetSubject() != "" || ev.GetDataJson() != "null" {
					t.Fatalf("gap marker %v", ev)
				}
			case "test.flood":
				delivered++
			}
			if i == 0 {
				continue
			}
			prev := got[i-1]
			switch {
			case prev.GetKind() == events.KindGap && ev.GetSeq() < prev.GetSeq(),
				prev.GetKind() != events.KindGap && ev.GetKind() != events.KindGap && ev.GetSeq() != prev.GetSeq()+1:
				t.Fatalf("seq %d (%s) after %d (%s): out of order, or lost without a gap marker", ev.GetSeq(), ev.GetKind(), prev.GetSeq(), prev.GetKind())
			}
		}
		if gaps == 0 || delivered == 0 || delivered >= flood || got[0].GetSubject() != "flood/0" {
			t.Fatalf("%d gap markers, %d of %d flood events delivered, first %v; want a loss, marked", gaps, delivered, flood, got[0].GetSubject())
		}
	})

	t.Run("EndsWhenTheClientLeaves", func(t *testing.T) {
		e := startAPI(t)
		ctx, cancel := context.WithCancel(context.Background())
		stream := watch(ctx, t, e.member)
		cancel()
		if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
			t.Fatalf("Recv after cancel = %v", err)
		}
		wantEnded(t, e, codes.Canceled)
	})

	t.Run("CloseEndsWatchesAndRefusesNewOnes", func(t *testing.T) {
		e := startAPI(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stream := watch(ctx, t, e.admin)
		e.srv.Close()
		_, err := stream.Recv()
		wantCode(t, "watch after Close", err, codes.Unavailable)
		wantEnded(t, e, codes.Unavailable)
		again, err := e.member.WatchEvents(ctx, &operatorv1.WatchEventsRequest{})
		if err == nil {
			_, err = again.Recv()
		}
		wantCode(t, "new watch after Close", err, codes.Unavailable)
		e.srv.Close() // twice is harmless
		if _, err := e.member.WhoAmI(ctx, &operatorv1.WhoAmIRequest{}); err != nil {
			t.Fatalf("unary calls after Close: %v", err)
		}
	})

	t.Run("NeedsAnOperatorCredential", func(t *testing.T) {
		e := startAPI(t)
		stream, err := operatorv1.NewOperatorServiceClient(dialBufconn(t, e.lis, "")).WatchEvents(context.Background(), &operatorv1.WatchEventsRequest{})
		if err == nil {
			_, err = stream.Recv()
		}
		wantCode(t, "watch without credential", err, codes.Unauthenticated)
	})
}

// ndjsonLine is one line of the REST event stream.
type ndjsonLine struct {
	Result *struct {
		Event *struct {
			Seq      string `json:"seq"`
			At       string `json:"at"`
			Kind     string `json:"kind"`
			Subject  string `json:"subject"`
			DataJSON string `json:"data_json"`
		} `json:"event"`
	} `json:"result"`
	Error *struct {
		Code codes.Code `json:"code"`
	} `json:"error"`
}

func TestWatchEventsREST(t *testing.T) {
	e := startAPI(t)
	srv := httptest.NewServer(e.rest)
	defer srv.Close()
	get := func(ctx context.Context, token string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/operator/events", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	t.Run("WithoutCredentialIsUnauthorized", func(t *testing.T) {
		resp := get(context.Background(), "")
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("GET events without credential = %d, want 401", resp.StatusCode)
		}
	})

	t.Run("StreamsNewlineDelimitedJSONUntilTheClientLeaves", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp := get(ctx, e.memberToken)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET events = %d", resp.StatusCode)
		}
		lines := bufio.NewScanner(resp.Body)
		next := func() ndjsonLine {
			t.Helper()
			if !lines.Scan() {
				t.Fatalf("stream ended: %v", lines.Err())
			}
			var l ndjsonLine
			if err := json.Unmarshal(lines.Bytes(), &l); err != nil || l.Result == nil {
				t.Fatalf("line %q (%v)", lines.Bytes(), err)
			}
			return l
		}
		if first := next(); first.Result.Event != nil {
			t.Fatalf("first line carries an event: %+v", first.Result.Event)
		}
		e.bus.Publish("question.created", "question/4", map[string]any{"id": 4})
		e.bus.Publish("question.submitted", "question/4", map[string]any{"id": 4, "status": "submitted"})
		a, b := next().Result.Event, next().Result.Event
		if a == nil || b == nil || a.Kind != "question.created" || a.Subject != "question/4" || a.DataJSON != `{"id":4}` || a.At == "" ||
			b.Kind != "question.submitted" || b.DataJSON != `{"id":4,"status":"submitted"}` {
			t.Fatalf("events %+v, %+v", a, b)
		}
		if sa, _ := strconv.ParseUint(a.Seq, 10, 64); sa == 0 || b.Seq != strconv.FormatUint(sa+1, 10) {
			t.Fatalf("seqs %q then %q, want consecutive", a.Seq, b.Seq)
		}
		cancel()
		wantEnded(t, e, codes.Canceled)
	})

	t.Run("CloseEndsTheStreamWithAnErrorLine", func(t *testing.T) {
		resp := get(context.Background(), e.adminToken)
		defer resp.Body.Close()
		lines := bufio.NewScanner(resp.Body)
		if !lines.Scan() {
			t.Fatalf("no first line: %v", lines.Err())
		}
		e.srv.Close()
		if !lines.Scan() {
			t.Fatalf("no error line: %v", lines.Err())
		}
		var l ndjsonLine
		if err := json.Unmarshal(lines.Bytes(), &l); err != nil || l.Error == nil || l.Error.Code != codes.Unavailable {
			t.Fatalf("last line %q (%v), want an UNAVAILABLE error", lines.Bytes(), err)
		}
		if lines.Scan() {
			t.Fatalf("a line after the error: %q", lines.Bytes())
		}
	})
}
