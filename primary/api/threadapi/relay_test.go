package threadapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/primary/store"
)

// TestACommandApprovalIsSeenAndDecidedInItsThread: a background command waiting for an
// admin appears in its thread with its text and actions; an unlinked account and a linked
// member are refused; a linked admin's approval closes it naming who and from which account,
// the audit says so too, and a later decision gets that closing.
func TestACommandApprovalIsSeenAndDecidedInItsThread(t *testing.T) {
	env := start(t)
	addOperator(t, env, "ada", store.RoleAdmin)
	addOperator(t, env, "mia", store.RoleMember)
	link(t, env, "@ada:example.org", "ada")
	link(t, env, "@mia:example.org", "mia")
	const thread = "$approve"
	setMode(t, env, thread, store.ModeAuto)
	sub := subscribe(t, env, &threadv1.SubscribeRequest{Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}})
	callNative(t, env, openIn(t, env, "@alice:example.org", thread), "run_in_background", `{"command":"printf done","label":"build"}`)

	it := sub.next(t).GetItem()
	if it.GetKind() != threadv1.ItemKind_ITEM_KIND_COMMAND_APPROVAL || it.GetChange() != threadv1.ItemChange_ITEM_CHANGE_OPENED ||
		it.GetState() != threadv1.ItemState_ITEM_STATE_OPEN || it.GetText() != "printf done" || it.GetTitle() != "build" ||
		it.GetPreview() != "printf done" || it.GetPreviewTruncated() || it.GetWorkdir() == "" || it.GetRequester() != "@alice:example.org" ||
		it.GetConversation().GetChannel() != channel || it.GetConversation().GetThread() != thread || it.GetClosing() != nil ||
		!slices.Equal(it.GetActions(), []threadv1.ItemAction{threadv1.ItemAction_ITEM_ACTION_APPROVE, threadv1.ItemAction_ITEM_ACTION_DENY, threadv1.ItemAction_ITEM_ACTION_COMMENT}) {
		t.Fatalf("opened item %v", it)
	}
	key := it.GetItemKey()
	if !strings.HasPrefix(key, "approval/") {
		t.Fatalf("item key %q", key)
	}
	client := feedClient(env)
	ctx := context.Background()
	decide := func(user string, d threadv1.ItemAction, text string) (*threadv1.DecideItemResponse, error) {
		return client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: key, Identity: matrix(user), Decision: d, Text: text})
	}

	t.Run("AnUnlinkedAccountIsRefused", func(t *testing.T) {
		_, err := decide("@eve:example.org", threadv1.ItemAction_ITEM_ACTION_APPROVE, "")
		refusedWith(t, err, "PermissionDenied",
			`the matrix account "@eve:example.org" is not linked to anyone here; an admin must link it before it can decide or answer`)
	})
	t.Run("ALinkedMemberCannotApprove", func(t *testing.T) {
		_, err := decide("@mia:example.org", threadv1.ItemAction_ITEM_ACTION_APPROVE, "")
		refusedWith(t, err, "FailedPrecondition", `the command cannot start now: only an admin can approve; "mia" is a member`)
	})
	t.Run("AFormsMoveIsNotADecision", func(t *testing.T) {
		_, err := decide("@ada:example.org", threadv1.ItemAction_ITEM_ACTION_SUBMIT, "")
		refusedWith(t, err, "InvalidArgument", "decision is required: approve, deny, comment, allow_once, allow_thread or allow_conversation")
		_, err = decide("@ada:example.org", threadv1.ItemAction_ITEM_ACTION_ALLOW_ONCE, "")
		refusedWith(t, err, "InvalidArgument", `a command approval takes approve, deny, comment, not "allow_once"`)
	})
	t.Run("ACommentIsTakenUpToItsLimitAndKeepsTheItemOpen", func(t *testing.T) {
		res, err := decide("@mia:example.org", threadv1.ItemAction_ITEM_ACTION_COMMENT, strings.Repeat("c", store.MaxApprovalComment))
		if err != nil || res.GetItem().GetState() != threadv1.ItemState_ITEM_STATE_OPEN || len(res.GetItem().GetComments()) != 1 ||
			res.GetItem().GetComments()[0].GetBy() != "mia" {
			t.Fatalf("comment: %v, %v", res, err)
		}
		_, err = decide("@mia:example.org", threadv1.ItemAction_ITEM_ACTION_COMMENT, strings.Repeat("c", store.MaxApprovalComment+1))
		refusedWith(t, err, "InvalidArgument", "invalid argument: a comment must be 1..2000 bytes of UTF-8")
	})
	t.Run("ALinkedAdminsApprovalClosesItNamingTheAccount", func(t *testing.T) {
		res, err := decide("@ada:example.org", threadv1.ItemAction_ITEM_ACTION_APPROVE, "")
		if err != nil {
			t.Fatal(err)
		}
		checkApproved(t, res.GetItem())
		closed := sub.until(t, key, threadv1.ItemChange_ITEM_CHANGE_CLOSED).GetItem()
		checkApproved(t, closed)
		entries, err := env.Primary.Internals().Store.ListAudit(ctx, store.AuditFilter{Subject: key, Actor: "ada", Limit: 1})
		if err != nil || len(entries) != 1 {
			t.Fatalf("audit %v, %v", entries, err)
		}
		if via, ok := store.ViaOfAudit(entries[0]); !ok || via != (store.Via{Surface: "matrix", ChatUserID: "@ada:example.org"}) {
			t.Fatalf("audit entry %s %s does not name the account", entries[0].Action, entries[0].Detail)
		}
	})
	t.Run("ALaterDecisionGetsTheFirstOnesClosing", func(t *testing.T) {
		_, err := decide("@mia:example.org", threadv1.ItemAction_ITEM_ACTION_DENY, "too late")
		refusedWith(t, err, "Aborted", key+` was already decided (approve) by ada from the matrix account "@ada:example.org"; nothing changed`)
	})
}

func checkApproved(t *testing.T, it *threadv1.ThreadItem) {
	t.Helper()
	c := it.GetClosing()
	if it.GetState() != threadv1.ItemState_ITEM_STATE_CLOSED || len(it.GetActions()) != 0 ||
		c.GetHow() != threadv1.ClosingHow_CLOSING_HOW_DECIDED || c.GetDecision() != threadv1.ItemAction_ITEM_ACTION_APPROVE ||
		c.GetBy() != "ada" || c.GetVia().GetSurface() != "matrix" || c.GetVia().GetChatUserId() != "@ada:example.org" || c.GetAt() == nil {
		t.Fatalf("approved item %v", it)
	}
}

// TestATruncatedPreviewCannotBeApproved: a card that showed a command cut short cannot
// approve it; a denial from the same card is taken.
func TestATruncatedPreviewCannotBeApproved(t *testing.T) {
	env := start(t)
	addOperator(t, env, "ada", store.RoleAdmin)
	link(t, env, "@ada:example.org", "ada")
	const thread = "$preview"
	setMode(t, env, thread, store.ModeAuto)
	command := "printf " + strings.Repeat("a", 100)
	sub := subscribe(t, env, &threadv1.SubscribeRequest{MaxCardBytes: 16, Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}})
	callNative(t, env, openIn(t, env, "@alice:example.org", thread), "run_in_background", `{"command":"`+command+`"}`)
	it := sub.next(t).GetItem()
	if it.GetText() != command || it.GetPreview() != command[:16] || !it.GetPreviewTruncated() {
		t.Fatalf("item %v: want its preview cut to 16 bytes", it)
	}
	client := feedClient(env)
	ctx := context.Background()
	_, err := client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: it.GetItemKey(), Identity: matrix("@ada:example.org"),
		Decision: threadv1.ItemAction_ITEM_ACTION_APPROVE, CardBytes: 16})
	refusedWith(t, err, "FailedPrecondition", it.GetItemKey()+
		" was shown cut to 16 of its 107 bytes; open its full text before you approve it (denying or commenting needs no full reading)")
	res, err := client.DecideItem(ctx, &threadv1.DecideItemRequest{ItemKey: it.GetItemKey(), Identity: matrix("@ada:example.org"),
		Decision: threadv1.ItemAction_ITEM_ACTION_DENY, Text: "too long to read", CardBytes: 16})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.GetItem().GetClosing(); c.GetDecision() != threadv1.ItemAction_ITEM_ACTION_DENY || c.GetNote() != "too long to read" || c.GetBy() != "ada" {
		t.Fatalf("denied item %v", res.GetItem())
	}
}

// TestAFormIsAnsweredOnlyByItsRequester: the requester, linked and no operator, saves and
// submits the form; another linked person is refused.
func TestAFormIsAnsweredOnlyByItsRequester(t *testing.T) {
	env := start(t)
	addOperator(t, env, "mia", store.RoleMember)
	link(t, env, "@bob:example.org", "bob") // no operator is named bob
	link(t, env, "@mia:example.org", "mia")
	const thread = "$form"
	sub := subscribe(t, env, &threadv1.SubscribeRequest{Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}})
	callNative(t, env, openIn(t, env, "bob", thread), "ask_questions",
		`{"title":"Deploy","presentation":"modal","questions":[{"id":"env","prompt":"Where?","type":"single","options":[{"label":"Production","value":"prod"}]}]}`)
	it := sub.next(t).GetItem()
	if it.GetKind() != threadv1.ItemKind_ITEM_KIND_QUESTION_FORM || it.GetTitle() != "Deploy" || it.GetPresentation() != "modal" ||
		it.GetRevision() != 1 || it.GetRequester() != "bob" || !strings.Contains(it.GetText(), `"prompt":"Where?"`) ||
		!slices.Equal(it.GetActions(), []threadv1.ItemAction{threadv1.ItemAction_ITEM_ACTION_SAVE_DRAFT, threadv1.ItemAction_ITEM_ACTION_SUBMIT, threadv1.ItemAction_ITEM_ACTION_CANCEL}) {
		t.Fatalf("form %v", it)
	}
	key := it.GetItemKey()
	client := feedClient(env)
	ctx := context.Background()
	answers := `{"env":{"values":["prod"]}}`

	t.Run("AnotherPersonIsRefused", func(t *testing.T) {
		_, err := client.SubmitForm(ctx, &threadv1.SubmitFormRequest{ItemKey: key, Identity: matrix("@mia:example.org"), Revision: 1, AnswersJson: answers})
		refusedWith(t, err, "PermissionDenied", "not allowed: only bob, who was asked, can answer question request "+strings.TrimPrefix(key, "question/"))
	})
	t.Run("TheRequesterWhoIsNoOperatorAnswers", func(t *testing.T) {
		draft, err := client.SaveFormDraft(ctx, &threadv1.SaveFormDraftRequest{ItemKey: key, Identity: matrix("@bob:example.org"), Revision: 1, AnswersJson: answers})
		if err != nil || draft.GetItem().GetRevision() != 2 || draft.GetItem().GetState() != threadv1.ItemState_ITEM_STATE_OPEN {
			t.Fatalf("draft: %v, %v", draft, err)
		}
		res, err := client.SubmitForm(ctx, &threadv1.SubmitFormRequest{ItemKey: key, Identity: matrix("@bob:example.org"), Revision: 2, AnswersJson: answers})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range []*threadv1.ThreadItem{res.GetItem(), sub.until(t, key, threadv1.ItemChange_ITEM_CHANGE_CLOSED).GetItem()} {
			c := it.GetClosing()
			if c.GetHow() != threadv1.ClosingHow_CLOSING_HOW_ANSWERED || c.GetBy() != "bob" || c.GetVia().GetChatUserId() != "@bob:example.org" {
				t.Fatalf("answered form %v", it)
			}
		}
	})
	t.Run("ACancelAfterTheAnswerGetsItsClosing", func(t *testing.T) {
		_, err := client.CancelForm(ctx, &threadv1.CancelFormRequest{ItemKey: key, Identity: matrix("@bob:example.org")})
		refusedWith(t, err, "Aborted", key+` was already answered by bob from the matrix account "@bob:example.org"; nothing changed`)
	})
}
