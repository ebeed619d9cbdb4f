package continuationapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// patience bounds every wait of these tests; nothing waits for it unless a test fails.
const patience = 30 * time.Second

// subscriber is one open Subscribe stream of the runtime, cancelled at cleanup.
type subscriber struct {
	stream grpc.ServerStreamingClient[continuationv1.SubscribeResponse]
	cancel context.CancelFunc
}

func subscribe(t *testing.T, env *testenv.Env) *subscriber {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	stream, err := continuationv1.NewContinuationServiceClient(env.Conn).Subscribe(ctx, &continuationv1.SubscribeRequest{})
	if err != nil {
		cancel()
		t.Fatalf("Subscribe: %v", err)
	}
	t.Cleanup(cancel)
	return &subscriber{stream: stream, cancel: cancel}
}

// expect receives len(keys) continuations, checks their keys, in order, and returns them.
func (s *subscriber) expect(t *testing.T, keys ...string) []*continuationv1.Continuation {
	t.Helper()
	var got []*continuationv1.Continuation
	for i, key := range keys {
		msg, err := s.stream.Recv()
		if err != nil {
			t.Fatalf("Recv (waiting for %q): %v", key, err)
		}
		if c := msg.GetContinuation(); c.GetIdempotencyKey() != key {
			t.Fatalf("continuation %d is %q, want %q", i, c.GetIdempotencyKey(), key)
		}
		got = append(got, msg.GetContinuation())
	}
	return got
}

// attempts lists the delivery attempts of cs.
func attempts(cs []*continuationv1.Continuation) []uint32 {
	out := make([]uint32, len(cs))
	for i, c := range cs {
		out[i] = c.GetDeliveryAttempt()
	}
	return out
}

func checkAttempts(t *testing.T, cs []*continuationv1.Continuation, want ...uint32) {
	t.Helper()
	if got := attempts(cs); !slices.Equal(got, want) {
		t.Fatalf("delivery attempts %v, want %v", got, want)
	}
}

func enqueue(t *testing.T, env *testenv.Env, keys ...string) {
	t.Helper()
	for _, key := range keys {
		if _, created, err := env.Primary.Internals().Continuations.Enqueue(context.Background(), key, "room", "thread", "resume: "+key); err != nil || !created {
			t.Fatalf("Enqueue %s: created %v, %v", key, created, err)
		}
	}
}

func ack(t *testing.T, env *testenv.Env, c *continuationv1.Continuation) {
	t.Helper()
	if _, err := continuationv1.NewContinuationServiceClient(env.Conn).Ack(context.Background(), &continuationv1.AckRequest{Id: c.GetId()}); err != nil {
		t.Fatalf("Ack %d: %v", c.GetId(), err)
	}
}

func TestSubscribe(t *testing.T) {
	t.Run("ASubscriberGetsPendingThenLiveContinuationsInOrder", func(t *testing.T) {
		env := testenv.Start(t)
		enqueue(t, env, "job/1", "job/2")
		sub := subscribe(t, env)
		got := sub.expect(t, "job/1", "job/2")
		enqueue(t, env, "job/3", "job/4")
		got = append(got, sub.expect(t, "job/3", "job/4")...)
		checkAttempts(t, got, 1, 1, 1, 1)

		first := got[0]
		if first.GetConversation().GetChannel() != "room" || first.GetConversation().GetThread() != "thread" ||
			first.GetText() != "resume: job/1" || first.GetCreatedAt().AsTime().IsZero() {
			t.Fatalf("first continuation %v", first)
		}
		for i := 1; i < len(got); i++ {
			if got[i].GetId() <= got[i-1].GetId() {
				t.Fatalf("ids out of order: %d after %d", got[i].GetId(), got[i-1].GetId())
			}
		}
	})

	t.Run("UnacknowledgedContinuationsAreRedeliveredAfterAReconnect", func(t *testing.T) {
		env := testenv.Start(t)
		enqueue(t, env, "job/1", "job/2")
		first := subscribe(t, env)
		got := first.expect(t, "job/1", "job/2")
		ack(t, env, got[0])
		first.cancel()

		second := subscribe(t, env)
		checkAttempts(t, second.expect(t, "job/2"), 2)
		enqueue(t, env, "job/3") // job/1, acknowledged, would have come before it
		checkAttempts(t, second.expect(t, "job/3"), 1)
	})

	t.Run("EverySubscriberSeesEveryContinuationAndAcksAreGlobal", func(t *testing.T) {
		env := testenv.Start(t)
		a, b := subscribe(t, env), subscribe(t, env)
		enqueue(t, env, "job/1")
		gotA, gotB := a.expect(t, "job/1"), b.expect(t, "job/1")
		both := attempts(append(gotA, gotB...))
		slices.Sort(both)
		if !slices.Equal(both, []uint32{1, 2}) { // one delivery each, in either order
			t.Fatalf("delivery attempts %v, want 1 and 2", both)
		}
		ack(t, env, gotA[0])
		enqueue(t, env, "job/2")
		a.expect(t, "job/2")
		b.expect(t, "job/2")
		c := subscribe(t, env) // a acknowledged job/1 for everyone: c starts at job/2
		checkAttempts(t, c.expect(t, "job/2"), 3)
	})

	t.Run("ClosingTheServiceEndsSubscriptionsWithUnavailable", func(t *testing.T) {
		env := testenv.Start(t)
		sub := subscribe(t, env)
		env.Primary.Internals().Continuations.Close()
		if _, err := sub.stream.Recv(); status.Code(err) != codes.Unavailable {
			t.Fatalf("open stream ended with %v, want UNAVAILABLE", err)
		}
		if _, err := subscribe(t, env).stream.Recv(); status.Code(err) != codes.Unavailable {
			t.Fatalf("new stream: %v, want UNAVAILABLE", err)
		}
	})
}

func TestContinuationsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	var acked *continuationv1.Continuation
	if !t.Run("FirstPrimaryDeliversAndOneIsAcknowledged", func(t *testing.T) {
		env := testenv.Start(t, testenv.WithStateDir(dir))
		enqueue(t, env, "job/1", "job/2", "job/3")
		got := subscribe(t, env).expect(t, "job/1", "job/2", "job/3")
		acked = got[1]
		ack(t, env, acked)
	}) {
		return
	}
	t.Run("SecondPrimaryRedeliversOnlyTheUnacknowledged", func(t *testing.T) {
		env := testenv.Start(t, testenv.WithStateDir(dir))
		sub := subscribe(t, env)
		checkAttempts(t, sub.expect(t, "job/1", "job/3"), 2, 2)
		enqueue(t, env, "job/4") // job/2, acknowledged, would have come before it
		checkAttempts(t, sub.expect(t, "job/4"), 1)

		// The same event again after the restart is still the one continuation.
		id, created, err := env.Primary.Internals().Continuations.Enqueue(context.Background(), "job/2", "room", "thread", "again")
		if err != nil || created || uint64(id) != acked.GetId() {
			t.Fatalf("re-enqueue of job/2: id %d (want %d), created %v, %v", id, acked.GetId(), created, err)
		}
	})
}

func TestAck(t *testing.T) {
	env := testenv.Start(t)
	client := continuationv1.NewContinuationServiceClient(env.Conn)
	ctx := context.Background()
	enqueue(t, env, "job/1")
	c := subscribe(t, env).expect(t, "job/1")[0]

	t.Run("AcknowledgingTwiceIsNotAnError", func(t *testing.T) {
		for range 2 {
			if _, err := client.Ack(ctx, &continuationv1.AckRequest{Id: c.GetId()}); err != nil {
				t.Fatalf("Ack: %v", err)
			}
		}
	})

	t.Run("AnIdNeverIssuedIsNotFound", func(t *testing.T) {
		if _, err := client.Ack(ctx, &continuationv1.AckRequest{Id: c.GetId() + 1000}); status.Code(err) != codes.NotFound {
			t.Fatalf("Ack: %v, want NOT_FOUND", err)
		}
	})

	t.Run("AMissingIdIsInvalid", func(t *testing.T) {
		if _, err := client.Ack(ctx, &continuationv1.AckRequest{}); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("Ack: %v, want INVALID_ARGUMENT", err)
		}
	})
}

func TestEnqueueRefusesAnIncompleteContinuation(t *testing.T) {
	env := testenv.Start(t)
	_, _, err := env.Primary.Internals().Continuations.Enqueue(context.Background(), "", "room", "", "text")
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Enqueue without a key: %v, want store.ErrInvalid", err)
	}
}

func TestContinuationServiceNeedsTheRuntimeCredential(t *testing.T) {
	env := testenv.Start(t)
	conn, err := grpc.NewClient("passthrough:///primary",
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return env.DialPrimary(ctx, addr) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := continuationv1.NewContinuationServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	stream, err := client.Subscribe(ctx, &continuationv1.SubscribeRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("Subscribe without a credential: %v", err)
	}
	if _, err := client.Ack(ctx, &continuationv1.AckRequest{Id: 1}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("Ack without a credential: %v", err)
	}
}

func TestContinuationsOverREST(t *testing.T) {
	env := testenv.Start(t)
	httpc := &http.Client{Transport: &http.Transport{}}
	defer httpc.CloseIdleConnections()
	enqueue(t, env, "job/1")

	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.HTTPURL+"/v1/continuations:subscribe", nil)
	req.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
	resp, err := httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("subscribe: status %d", resp.StatusCode)
	}
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() {
		t.Fatalf("subscribe stream ended: %v", lines.Err())
	}
	var msg struct {
		Result struct {
			Continuation struct {
				ID              string `json:"id"` // a uint64 is a JSON string
				IdempotencyKey  string `json:"idempotency_key"`
				DeliveryAttempt int    `json:"delivery_attempt"`
				Conversation    struct {
					Channel string `json:"channel"`
				} `json:"conversation"`
			} `json:"continuation"`
		} `json:"result"`
	}
	if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
		t.Fatalf("%v: %s", err, lines.Bytes())
	}
	c := msg.Result.Continuation
	if c.IdempotencyKey != "job/1" || c.DeliveryAttempt != 1 || c.Conversation.Channel != "room" {
		t.Fatalf("continuation %s", lines.Bytes())
	}
	if _, err := strconv.ParseUint(c.ID, 10, 64); err != nil {
		t.Fatalf("id %q: %v", c.ID, err)
	}

	ackReq, _ := http.NewRequest(http.MethodPost, env.HTTPURL+"/v1/continuations/"+c.ID+":ack", nil)
	ackReq.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
	ackResp, err := httpc.Do(ackReq)
	if err != nil {
		t.Fatal(err)
	}
	ackResp.Body.Close()
	if ackResp.StatusCode != http.StatusOK {
		t.Fatalf("ack: status %d", ackResp.StatusCode)
	}
	if pending, err := env.Primary.Internals().Store.PendingContinuations(context.Background(), 0, 10); err != nil || len(pending) != 0 {
		t.Fatalf("pending after the REST ack: %v, %v", pending, err)
	}
}
