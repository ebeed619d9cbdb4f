package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// heartbeat keeps an idle event stream from being closed by proxies, and lets a gone browser
// be noticed.
const heartbeat = 20 * time.Second

// events relays the operator's event feed (WatchEvents with their credential) as Server-Sent
// Events. Only what changed (kind and subject) goes to the browser, never the record: the
// page fetches the affected fragments again, through the same checks as any page. "ready"
// says the watch is in place (after a reconnect too), so the page catches up by refetching.
func (s *Server) events(q *request) error {
	ctx, cancel := context.WithCancel(q.ctx)
	defer cancel()
	stream, err := s.op.WatchEvents(ctx, &operatorv1.WatchEventsRequest{})
	if err != nil {
		return err
	}
	if _, err := stream.Recv(); err != nil { // the watch is in place: from here on nothing is missed
		return err
	}
	rc := http.NewResponseController(q.w)
	h := q.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	q.w.WriteHeader(http.StatusOK)
	if _, err := q.w.Write([]byte("event: ready\ndata: {}\n\n")); err != nil || rc.Flush() != nil {
		return nil
	}

	type change struct {
		Kind    string `json:"kind"`
		Subject string `json:"subject"`
	}
	changes := make(chan change)
	done := make(chan struct{})
	go func() { // owned by this request: cancelling ctx ends the stream, and this with it
		defer close(done)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			select {
			case changes <- change{Kind: m.GetEvent().GetKind(), Subject: m.GetEvent().GetSubject()}:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() { cancel(); <-done }()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		var msg []byte
		select {
		case <-done:
			return nil // the primary stops, or the watch failed: the browser reconnects
		case <-ctx.Done():
			return nil
		case <-tick.C:
			msg = []byte(": heartbeat\n\n")
		case c := <-changes:
			data, _ := json.Marshal(c)
			msg = append(append([]byte("data: "), data...), "\n\n"...)
		}
		if _, err := q.w.Write(msg); err != nil || rc.Flush() != nil {
			return nil // the browser left
		}
	}
}
