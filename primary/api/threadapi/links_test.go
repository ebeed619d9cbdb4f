package threadapi_test

import (
	"context"
	"slices"
	"testing"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/store"
)

// TestDecisionLinksOfAPermissionPromptLeaveOutWhatAMemberMayNotDo: an admin gets a link for
// each way of allowing and for denying; a member gets no link to allow the tool for the whole
// conversation; a question form takes no links.
func TestDecisionLinksOfAPermissionPromptLeaveOutWhatAMemberMayNotDo(t *testing.T) {
	env := start(t, testenv.WithConfig(func(c *primary.Config) { c.Links.BaseURL = "https://turncli.example.org" }))
	addOperator(t, env, "mia", store.RoleMember)
	addOperator(t, env, "ada", store.RoleAdmin)
	link(t, env, "@mia:example.org", "mia")
	link(t, env, "@ada:example.org", "ada")
	const thread = "$links"
	sub := subscribe(t, env, &threadv1.SubscribeRequest{Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}})
	callAsync(t, env, openIn(t, env, "@alice:example.org", thread), "interaction", "permission_prompt", `{"tool_name":"Bash","input":{"command":"ls"}}`)
	key := sub.next(t).GetItem().GetItemKey()

	decisions := func(user string) []threadv1.ItemAction {
		t.Helper()
		res, err := feedClient(env).MintDecisionLinks(context.Background(), &threadv1.MintDecisionLinksRequest{ItemKey: key, Identity: matrix(user)})
		if err != nil {
			t.Fatalf("links for %s: %v", user, err)
		}
		var out []threadv1.ItemAction
		for _, l := range res.GetLinks() {
			out = append(out, l.GetDecision())
		}
		return out
	}
	once, inThread, conversation, deny := threadv1.ItemAction_ITEM_ACTION_ALLOW_ONCE, threadv1.ItemAction_ITEM_ACTION_ALLOW_THREAD,
		threadv1.ItemAction_ITEM_ACTION_ALLOW_CONVERSATION, threadv1.ItemAction_ITEM_ACTION_DENY
	if got, want := decisions("@ada:example.org"), []threadv1.ItemAction{once, inThread, conversation, deny}; !slices.Equal(got, want) {
		t.Errorf("the admin's links %v; want %v", got, want)
	}
	if got, want := decisions("@mia:example.org"), []threadv1.ItemAction{once, inThread, deny}; !slices.Equal(got, want) {
		t.Errorf("the member's links %v; want %v", got, want)
	}

	callAsync(t, env, openIn(t, env, "@alice:example.org", thread), "interaction", "ask_questions",
		`{"title":"Deploy","questions":[{"id":"why","prompt":"Why now?","type":"text"}]}`)
	form := sub.next(t).GetItem().GetItemKey()
	_, err := feedClient(env).MintDecisionLinks(context.Background(), &threadv1.MintDecisionLinksRequest{ItemKey: form, Identity: matrix("@ada:example.org")})
	refusedWith(t, err, "InvalidArgument", "a question form is answered, saved or cancelled, not decided")
}
