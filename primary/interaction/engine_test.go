package interaction_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// continuationFeed is the runtime's continuation stream, read in the background.
type continuationFeed chan *continuationv1.Continuation

// subscribeContinuations opens the runtime's continuation stream, as a runtime does.
func subscribeContinuations(t testing.TB, env *testenv.Env) continuationFeed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := continuationv1.NewContinuationServiceClient(env.Conn).Subscribe(ctx, &continuationv1.SubscribeRequest{})
	if err != nil {
		cancel()
		t.Fatalf("subscribe to continuations: %v", err)
	}
	feed := make(continuationFeed, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := stream.Recv()
			if err != nil {
				return
			}
			feed <- msg.GetContinuation()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return feed
}

// await returns the continuation with the key. The bound only keeps a broken test from hanging.
func (f continuationFeed) await(t testing.TB, key string) *continuationv1.Continuation {
	t.Helper()
	return f.awaitWithin(t, key, waitBound)
}

// awaitWithin is await with its own bound.
func (f continuationFeed) awaitWithin(t testing.TB, key string, waitBound time.Duration) *continuationv1.Continuation {
	t.Helper()
	bound := time.NewTimer(waitBound)
	defer bound.Stop()
	for {
		select {
		case c := <-f:
			if c.GetIdempotencyKey() == key {
				return c
			}
		case <-bound.C:
			t.Fatalf("no continuation %s within %v", key, waitBound)
		}
	}
}

// operatorWatch is an operator's live feed, read in the background.
type operatorWatch chan *operatorv1.Event

// watchAsOperator opens the operator's live feed and returns once the watch is in place.
func watchAsOperator(t testing.TB, api operatorv1.OperatorServiceClient) operatorWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := api.WatchEvents(ctx, &operatorv1.WatchEventsRequest{})
	if err == nil {
		_, err = stream.Recv() // the watch is in place
	}
	if err != nil {
		cancel()
		t.Fatalf("watch events: %v", err)
	}
	w := make(operatorWatch, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := stream.Recv()
			if err != nil {
				return
			}
			w <- msg.GetEvent()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// promptCreated returns the next prompt posted, as the operator API shows it.
func (w operatorWatch) promptCreated(t testing.TB, api operatorv1.OperatorServiceClient) *operatorv1.Prompt {
	t.Helper()
	bound := time.NewTimer(waitBound)
	defer bound.Stop()
	for {
		select {
		case ev := <-w:
			if ev.GetKind() != "prompt.created" {
				continue
			}
			var data struct {
				ID uint64 `json:"id"`
			}
			if err := json.Unmarshal([]byte(ev.GetDataJson()), &data); err != nil {
				t.Fatalf("event %s: %v", ev.GetDataJson(), err)
			}
			got, err := api.GetPrompt(context.Background(), &operatorv1.GetPromptRequest{PromptId: data.ID})
			if err != nil {
				t.Fatalf("get prompt %d: %v", data.ID, err)
			}
			return got.GetPrompt()
		case <-bound.C:
			t.Fatalf("no prompt posted within %v", waitBound)
		}
	}
}
