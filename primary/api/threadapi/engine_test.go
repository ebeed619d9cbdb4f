package threadapi_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/internal/secretmask"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/threadfeed"
)

// TestTheFeedRedactsLiveSecretsItself: a surface in the primary's process reads the feed
// through its Go API, past no interceptor, and still never sees a live secret.
func TestTheFeedRedactsLiveSecretsItself(t *testing.T) {
	env := start(t)
	const thread = "$secret"
	setMode(t, env, thread, store.ModeAuto)
	token := env.Primary.RuntimeToken()
	callNative(t, env, openIn(t, env, "@alice:example.org", thread), "run_in_background", `{"command":"printf `+token+`"}`)
	msgs, err := env.Primary.Internals().ThreadFeed.Read(context.Background(), "", threadfeed.View{Channel: channel, Thread: thread, CardBytes: 12}, 10)
	if err != nil || len(msgs) != 1 || msgs[0].Item == nil {
		t.Fatalf("Read: %v, %v", msgs, err)
	}
	it := msgs[0].Item
	if it.Text != "printf "+secretmask.Redacted || strings.Contains(it.Preview, token[:5]) {
		t.Fatalf("the item shows %q (preview %q); want the token redacted", it.Text, it.Preview)
	}
}

// TestClosingTheFeedEndsSubscriptionsWithUnavailable: a stopping primary ends the endless
// streams first (phase intake), and the runtime subscribes again from its cursor.
func TestClosingTheFeedEndsSubscriptionsWithUnavailable(t *testing.T) {
	env := start(t)
	sub := subscribe(t, env, &threadv1.SubscribeRequest{})
	env.Primary.Internals().ThreadFeed.Close()
	_, err := sub.stream.Recv()
	refusedWith(t, err, "Unavailable", "the primary is stopping; subscribe again from your cursor")
	if err := subscribeErr(t, env, &threadv1.SubscribeRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("a new subscription: %v, want UNAVAILABLE", err)
	}
}

// TestAPlanSnapshotIsShownAsItStands: a response's plan appears in its thread, its steps as
// reported, with nothing to decide.
func TestAPlanSnapshotIsShownAsItStands(t *testing.T) {
	env := start(t)
	const thread = "$plan"
	sub := subscribe(t, env, &threadv1.SubscribeRequest{Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}})
	resp := env.Open(t, func(r *responsev1.OpenResponseRequest) {
		r.Conversation = &conversationv1.Conversation{Channel: channel, Thread: thread}
		r.Flags = append(r.Flags, "progress_report")
	})
	callNative(t, env, resp, "report_progress", `{"title":"Release","steps":[{"id":"build","title":"Build it","status":"in_progress"}]}`)
	it := sub.next(t).GetItem()
	if it.GetKind() != threadv1.ItemKind_ITEM_KIND_PLAN_SNAPSHOT || it.GetItemKey() != "progress/"+resp || it.GetTitle() != "Release" ||
		!strings.Contains(it.GetText(), `"title":"Build it"`) || !strings.Contains(it.GetText(), `"status":"in_progress"`) ||
		it.GetState() != threadv1.ItemState_ITEM_STATE_OPEN || len(it.GetActions()) != 0 {
		t.Fatalf("plan item %v", it)
	}
}
