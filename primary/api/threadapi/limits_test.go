package threadapi_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// subscribeErr is what Subscribe with req answers: nil when its first message came.
func subscribeErr(t *testing.T, env *testenv.Env, req *threadv1.SubscribeRequest) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	stream, err := feedClient(env).Subscribe(ctx, req)
	if err == nil {
		_, err = stream.Recv()
	}
	return err
}

// TestEveryLimitHoldsAtItsBoundary: each size a request carries passes at its limit and is
// refused, saying so, one over it.
func TestEveryLimitHoldsAtItsBoundary(t *testing.T) {
	env := start(t)
	link(t, env, "@bob:example.org", "bob")
	chunk := func(n uint32) string {
		return "the chunk size is " + strconv.FormatUint(uint64(n), 10) + " bytes; 1024..1048576 are allowed"
	}
	card := func(n uint32) string {
		return "the card size is " + strconv.FormatUint(uint64(n), 10) + " bytes; 0..65536 are allowed (0: the whole text is shown)"
	}
	for _, c := range []struct {
		name string
		req  *threadv1.SubscribeRequest
		want string // "" when accepted
	}{
		{"ChunkAtItsLeast", &threadv1.SubscribeRequest{MaxChunkBytes: 1024}, ""},
		{"ChunkOneUnder", &threadv1.SubscribeRequest{MaxChunkBytes: 1023}, chunk(1023)},
		{"ChunkAtItsMost", &threadv1.SubscribeRequest{MaxChunkBytes: 1 << 20}, ""},
		{"ChunkOneOver", &threadv1.SubscribeRequest{MaxChunkBytes: 1<<20 + 1}, chunk(1<<20 + 1)},
		{"CardAtItsMost", &threadv1.SubscribeRequest{MaxCardBytes: 1 << 16}, ""},
		{"CardOneOver", &threadv1.SubscribeRequest{MaxCardBytes: 1<<16 + 1}, card(1<<16 + 1)},
		{"CursorAtItsMost", &threadv1.SubscribeRequest{Cursor: strings.Repeat("1", 64)},
			"the cursor is not one the thread feed gave; resume from a cursor it sent, or from the start with an empty one"},
		{"CursorOneOver", &threadv1.SubscribeRequest{Cursor: strings.Repeat("1", 65)}, "cursor is 65 bytes; at most 64 are allowed"},
		{"AThreadWithoutItsChannel", &threadv1.SubscribeRequest{Conversation: &conversationv1.Conversation{Thread: "$t"}},
			"conversation.channel is required when a conversation is given"},
	} {
		t.Run("Subscribe"+c.name, func(t *testing.T) {
			err := subscribeErr(t, env, c.req)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			refusedWith(t, err, "InvalidArgument", c.want)
		})
	}

	client := feedClient(env)
	ctx := context.Background()
	t.Run("DecideItemCardOneOver", func(t *testing.T) {
		_, err := client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: "approval/1", Identity: matrix("@bob:example.org"),
			Decision: threadv1.ItemAction_ITEM_ACTION_DENY, CardBytes: 1<<16 + 1})
		refusedWith(t, err, "InvalidArgument", card(1<<16+1))
	})
	t.Run("DecideItemCardAtItsMostReachesTheItem", func(t *testing.T) {
		_, err := client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: "approval/1", Identity: matrix("@bob:example.org"),
			Decision: threadv1.ItemAction_ITEM_ACTION_DENY, CardBytes: 1 << 16})
		refusedWith(t, err, "NotFound", `there is no item "approval/1"`)
	})
	t.Run("AnItemKeyOneOver", func(t *testing.T) {
		_, err := client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: strings.Repeat("a", 129), Identity: matrix("@bob:example.org"),
			Decision: threadv1.ItemAction_ITEM_ACTION_DENY})
		refusedWith(t, err, "InvalidArgument", "item_key must be 1..128 bytes")
		_, err = client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: "approval/" + strings.Repeat("1", 119), Identity: matrix("@bob:example.org"),
			Decision: threadv1.ItemAction_ITEM_ACTION_DENY})
		refusedWith(t, err, "NotFound", `there is no item "approval/`+strings.Repeat("1", 119)+`"`)
	})
	t.Run("AnswersOneOver", func(t *testing.T) {
		_, err := client.SubmitForm(ctx, &threadv1.SubmitFormRequest{ItemKey: "question/1", Identity: matrix("@bob:example.org"),
			Revision: 1, AnswersJson: strings.Repeat(" ", 256<<10+1)})
		refusedWith(t, err, "InvalidArgument", "answers_json is 262145 bytes; at most 262144 are allowed")
	})
	t.Run("AnswersAtTheirMostReachTheForm", func(t *testing.T) {
		_, err := client.SubmitForm(ctx, &threadv1.SubmitFormRequest{ItemKey: "question/1", Identity: matrix("@bob:example.org"),
			Revision: 1, AnswersJson: strings.Repeat(" ", 256<<10)})
		refusedWith(t, err, "NotFound", `there is no item "question/1"`)
	})
	t.Run("ARelayNeedsItsAccountAndRevision", func(t *testing.T) {
		_, err := client.CancelForm(ctx, &threadv1.CancelFormRequest{ItemKey: "question/1"})
		refusedWith(t, err, "InvalidArgument", "identity.surface and identity.chat_user_id are required")
		_, err = client.SaveFormDraft(ctx, &threadv1.SaveFormDraftRequest{ItemKey: "question/1", Identity: matrix("@bob:example.org")})
		refusedWith(t, err, "InvalidArgument", "revision is required: the form's revision the answers were made on")
		_, err = client.CancelForm(ctx, &threadv1.CancelFormRequest{ItemKey: "approval/1", Identity: matrix("@bob:example.org")})
		refusedWith(t, err, "InvalidArgument", `"approval/1" is not a question form such as question/4`)
	})
	t.Run("ASurfaceOutsideItsRuleIsRefused", func(t *testing.T) {
		_, err := client.CancelForm(ctx, &threadv1.CancelFormRequest{ItemKey: "question/1", Identity: &threadv1.ChatIdentity{Surface: "Matrix", ChatUserId: "@bob:example.org"}})
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("surface Matrix: %v, want INVALID_ARGUMENT", err)
		}
	})
	t.Run("AnUnknownDecisionNumberIsRefused", func(t *testing.T) {
		_, err := client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: "approval/1", Identity: matrix("@bob:example.org"), Decision: 99})
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("decision 99: %v, want INVALID_ARGUMENT", err)
		}
	})
}
