package threadapi_test

import (
	"time"

	"context"
	"slices"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary"

	"github.com/google/uuid"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// callAsync calls a function natively without waiting: the call waits for a person.
func callAsync(t *testing.T, env *testenv.Env, responseID, toolkit, function, args string) {
	t.Helper()
	if _, err := env.Runtime.CallTool(context.Background(), &responsev1.CallToolRequest{
		ResponseId: responseID, CallId: uuid.NewString(), Toolkit: toolkit, Function: function, ArgumentsJson: args,
	}); err != nil {
		t.Fatalf("%s.%s: %v", toolkit, function, err)
	}
}

// TestAPermissionPromptIsAllowedInItsThread: the prompt shows its input masked; a member may
// not allow the tool for the whole conversation, but may allow it once.
func TestAPermissionPromptIsAllowedInItsThread(t *testing.T) {
	env := start(t)
	addOperator(t, env, "mia", store.RoleMember)
	link(t, env, "@mia:example.org", "mia")
	const thread = "$permission"
	sub := subscribe(t, env, &threadv1.SubscribeRequest{Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}})
	callAsync(t, env, openIn(t, env, "@alice:example.org", thread), "interaction", "permission_prompt",
		`{"tool_name":"Bash","input":{"command":"ls","api_key":"sk-live-123"}}`)
	it := sub.next(t).GetItem()
	if it.GetKind() != threadv1.ItemKind_ITEM_KIND_PERMISSION || it.GetTitle() != "Bash" || strings.Contains(it.GetText(), "sk-live-123") ||
		!strings.Contains(it.GetText(), `"command":"ls"`) ||
		!slices.Equal(it.GetActions(), []threadv1.ItemAction{threadv1.ItemAction_ITEM_ACTION_ALLOW_ONCE, threadv1.ItemAction_ITEM_ACTION_ALLOW_THREAD,
			threadv1.ItemAction_ITEM_ACTION_ALLOW_CONVERSATION, threadv1.ItemAction_ITEM_ACTION_DENY}) {
		t.Fatalf("permission item %v", it)
	}
	client := feedClient(env)
	ctx := context.Background()
	_, err := client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: it.GetItemKey(), Identity: matrix("@mia:example.org"),
		Decision: threadv1.ItemAction_ITEM_ACTION_ALLOW_CONVERSATION})
	refusedWith(t, err, "PermissionDenied",
		`not allowed: only an admin can allow a tool for the whole conversation; "mia" is a member; allow it once or for this thread instead`)
	res, err := client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: it.GetItemKey(), Identity: matrix("@mia:example.org"),
		Decision: threadv1.ItemAction_ITEM_ACTION_ALLOW_ONCE})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.GetItem().GetClosing(); c.GetDecision() != threadv1.ItemAction_ITEM_ACTION_ALLOW_ONCE || c.GetBy() != "mia" ||
		c.GetVia().GetChatUserId() != "@mia:example.org" {
		t.Fatalf("allowed item %v", res.GetItem())
	}
}

// TestACallApprovalIsApprovedOnlyByAnAdminWhoSawItWhole: a confirmed call's arguments are
// its text; a member cannot approve it, an admin cannot approve a preview cut short, and can
// once they opened the full text.
func TestACallApprovalIsApprovedOnlyByAnAdminWhoSawItWhole(t *testing.T) {
	env := start(t)
	addOperator(t, env, "ada", store.RoleAdmin)
	addOperator(t, env, "mia", store.RoleMember)
	link(t, env, "@ada:example.org", "ada")
	link(t, env, "@mia:example.org", "mia")
	const thread = "$call"
	sub := subscribe(t, env, &threadv1.SubscribeRequest{MaxCardBytes: 20, Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}})
	callAsync(t, env, openIn(t, env, "@alice:example.org", thread), "test", "confirm_echo", `{"note":"`+strings.Repeat("n", 40)+`"}`)
	it := sub.next(t).GetItem()
	if it.GetKind() != threadv1.ItemKind_ITEM_KIND_CALL_APPROVAL || it.GetTitle() != "test.confirm_echo" || !it.GetPreviewTruncated() ||
		len(it.GetPreview()) != 20 || !strings.Contains(it.GetText(), strings.Repeat("n", 40)) {
		t.Fatalf("call item %v", it)
	}
	client := feedClient(env)
	ctx := context.Background()
	approve := func(user string, full bool) (*threadv1.DecideItemResponse, error) {
		return client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: it.GetItemKey(), Identity: matrix(user),
			Decision: threadv1.ItemAction_ITEM_ACTION_APPROVE, CardBytes: 20, SawFullText: full})
	}
	_, err := approve("@mia:example.org", true)
	refusedWith(t, err, "PermissionDenied", `only an admin can approve a call; operator "mia" is a member`)
	_, err = approve("@ada:example.org", false)
	if !strings.HasPrefix(errMessage(err), it.GetItemKey()+" was shown cut to 20 of its ") {
		t.Fatalf("approval of a cut preview: %v", err)
	}
	res, err := approve("@ada:example.org", true)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.GetItem().GetClosing(); c.GetDecision() != threadv1.ItemAction_ITEM_ACTION_APPROVE || c.GetBy() != "ada" {
		t.Fatalf("approved call %v", res.GetItem())
	}
}

// TestACallNobodyDecidesClosesItsCardAsExpired: once the call approval expiry passes, the
// call's card closes as expired, with no decider, and can no longer be approved.
func TestACallNobodyDecidesClosesItsCardAsExpired(t *testing.T) {
	env := start(t, testenv.WithConfig(func(c *primary.Config) { c.Responses.CallApprovalExpiry = 100 * time.Millisecond }))
	addOperator(t, env, "ada", store.RoleAdmin)
	link(t, env, "@ada:example.org", "ada")
	const thread = "$expiring"
	sub := subscribe(t, env, &threadv1.SubscribeRequest{Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}})
	callAsync(t, env, openIn(t, env, "@alice:example.org", thread), "test", "confirm_echo", `{}`)
	// Each event shows the item as it stands when read: the opening may already show it closed.
	opened := sub.next(t).GetItem()
	closed := opened
	for closed.GetClosing() == nil {
		closed = sub.next(t).GetItem()
	}
	if c := closed.GetClosing(); opened.GetKind() != threadv1.ItemKind_ITEM_KIND_CALL_APPROVAL || closed.GetItemKey() != opened.GetItemKey() ||
		c.GetHow() != threadv1.ClosingHow_CLOSING_HOW_EXPIRED || c.GetBy() != "" {
		t.Fatalf("call item %v, closed as %v", opened, closed)
	}
	_, err := feedClient(env).DecideItem(context.Background(), &threadv1.DecideItemRequest{ItemKey: opened.GetItemKey(),
		Identity: matrix("@ada:example.org"), Decision: threadv1.ItemAction_ITEM_ACTION_APPROVE, SawFullText: true})
	if err == nil {
		t.Fatal("an expired call was approved")
	}
}
