package matrix_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/turncli/turncli/primary/surfaces/matrix"
)

var (
	requestedAt = time.Date(2026, 12, 5, 16, 0, 0, 0, time.UTC)
	expiresAt   = time.Date(2026, 12, 5, 17, 0, 0, 0, time.UTC)
	decidedAt   = time.Date(2026, 12, 5, 16, 5, 0, 0, time.UTC)
)

// callCard is an Agent CLI call approval carrying MindRoom's fields: approve or deny.
func callCard(c *conversation) matrix.Card {
	return matrix.Card{
		Key: "approval/7", Version: 1, Kind: matrix.KindCallApproval, Room: c.room, Thread: c.root,
		Title: "Run a tool call", Lines: []string{"Requested by coder"}, Text: "make deploy <prod>",
		Actions: []matrix.Decision{matrix.DecisionApprove, matrix.DecisionDeny},
		Tool: &matrix.ToolApproval{
			ApprovalID: "approval-7", ToolCallID: "call-1", ToolName: "shell.exec",
			Arguments:   map[string]any{"command": "make deploy <prod>"},
			RequesterID: c.bob.UserID, ApproverUserID: c.bob.UserID, AgentName: "coder",
			RequestedAt: requestedAt, ExpiresAt: expiresAt,
		},
	}
}

// planCard is a request_approval card with untrusted HTML in every text: approve, deny or
// comment.
func planCard(c *conversation) matrix.Card {
	return matrix.Card{
		Key: "plan/3", Version: 2, Kind: matrix.KindPlanApproval, Room: c.room, Thread: c.root,
		Title:   "<b>Plan</b> approval",
		Lines:   []string{`<a href="https://evil.example">click</a> & <script>alert(1)</script>`},
		Text:    "1. drop </code></pre><img src=x>",
		Actions: []matrix.Decision{matrix.DecisionApprove, matrix.DecisionDeny, matrix.DecisionComment},
	}
}

// callCardFields are the fields of the open call card as MindRoom's clients read them.
func callCardFields(c *conversation) map[string]any {
	return map[string]any{
		"msgtype":          "io.mindroom.tool_approval",
		"body":             "🔒 Approval required: shell.exec",
		"format":           "org.matrix.custom.html",
		"formatted_body":   "<p><strong>Run a tool call</strong></p><p>Requested by coder</p><pre><code>make deploy &lt;prod&gt;</code></pre><p><em>React ✅ to approve or ❌ to deny; reply to this message to deny with a reason.</em></p>",
		"m.mentions":       map[string]any{},
		"io.turncli.card":  map[string]any{"key": "approval/7", "kind": "call_approval", "version": 1, "actions": []any{"approve", "deny"}},
		"status":           "pending",
		"approval_id":      "approval-7",
		"tool_call_id":     "call-1",
		"tool_name":        "shell.exec",
		"arguments":        map[string]any{"command": "make deploy <prod>"},
		"agent_name":       "coder",
		"requester_id":     "@bob:localhost",
		"approver_user_id": "@bob:localhost",
		"requested_at":     "2026-12-05T16:00:00+00:00",
		"expires_at":       "2026-12-05T17:00:00+00:00",
		"thread_id":        string(c.root),
	}
}

func threadOf(root id.EventID) map[string]any {
	return map[string]any{"rel_type": "m.thread", "event_id": string(root), "is_falling_back": true,
		"m.in_reply_to": map[string]any{"event_id": string(root)}}
}

// realReply is a reply in the thread under root to target, as Element sends one.
func realReply(root, target id.EventID, body string) map[string]any {
	return map[string]any{"msgtype": "m.text", "body": body, "m.relates_to": map[string]any{
		"rel_type": "m.thread", "event_id": root, "is_falling_back": false,
		"m.in_reply_to": map[string]any{"event_id": target}}}
}

// withoutTime is a with At checked as set and then cleared, for comparing the rest.
func withoutTime(t *testing.T, a matrix.Answer) matrix.Answer {
	t.Helper()
	if a.At.IsZero() {
		t.Errorf("answer %s has no time", a.EventID)
	}
	a.At = time.Time{}
	return a
}

func TestSurface(t *testing.T) {
	ctx := context.Background()
	c := newConversation(t)
	surface := matrix.New(c.bot)

	call := callCard(c)
	callID, err := surface.Post(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	// Bob answers before the listener starts: that answer is the past, not read.
	c.react(t, c.bob, "bob-early", callID, "✅")

	cursor := &memCursor{}
	rec, stop := listen(t, c.bot, cursor)

	t.Run("AnApprovalCardIsMindRoomsEventInTheThread", func(t *testing.T) {
		typ, sender, content := c.read(t, callID)
		want := callCardFields(c)
		want["m.relates_to"] = threadOf(c.root)
		if typ != "io.mindroom.tool_approval" || sender != c.bot.UserID || content != canonical(t, want) {
			t.Fatalf("card = %s from %s %s\nwant io.mindroom.tool_approval from %s %s", typ, sender, content, c.bot.UserID, canonical(t, want))
		}
	})

	t.Run("PostingTheSameCardAgainIsTheSameEvent", func(t *testing.T) {
		again, err := surface.Post(ctx, call)
		if err != nil {
			t.Fatal(err)
		}
		if again != callID {
			t.Fatalf("the card posted again is %s, want %s", again, callID)
		}
		var cards int
		for _, evt := range c.relations(t, c.root, event.RelThread, callID, again) {
			if evt.Type.Type == matrix.ToolApprovalType.Type {
				cards++
			}
		}
		if cards != 1 {
			t.Fatalf("the thread holds %d approval cards, want 1", cards)
		}
	})

	t.Run("AReactionApprovesAndTheBotsOwnIsIgnored", func(t *testing.T) {
		c.react(t, c.bot, "bot-own", callID, "✅")
		reaction := c.react(t, c.bob, "bob-thumbs-up", callID, "👍")
		got := withoutTime(t, nextAnswer(t, rec))
		want := matrix.Answer{Key: "approval/7", CardEvent: callID, Room: c.room, Thread: c.root, Sender: c.bob.UserID,
			Decision: matrix.DecisionApprove, Gesture: matrix.GestureReaction, EventID: reaction}
		if got != want {
			t.Fatalf("answer = %+v\nwant %+v", got, want)
		}
	})

	var carolReply id.EventID
	t.Run("ThreadChatIsNoAnswerAndARealReplyDenies", func(t *testing.T) {
		// A thread message falls back to replying to the thread's latest event, the card.
		c.send(t, c.carol, event.EventMessage, "carol-chat", map[string]any{"msgtype": "m.text", "body": "thinking",
			"m.relates_to": map[string]any{"rel_type": "m.thread", "event_id": c.root, "is_falling_back": true,
				"m.in_reply_to": map[string]any{"event_id": callID}}})
		c.react(t, c.carol, "carol-eyes", callID, "👀")
		carolReply = c.send(t, c.carol, event.EventMessage, "carol-reply",
			realReply(c.root, callID, "> <@bot:localhost> 🔒 Approval required: shell.exec\n\nnot on Friday"))
		got := withoutTime(t, nextAnswer(t, rec))
		want := matrix.Answer{Key: "approval/7", CardEvent: callID, Room: c.room, Thread: c.root, Sender: c.carol.UserID,
			Decision: matrix.DecisionDeny, Text: "not on Friday", Gesture: matrix.GestureReply, EventID: carolReply}
		if got != want {
			t.Fatalf("answer = %+v\nwant %+v", got, want)
		}
	})

	t.Run("AMindRoomResponseDecides", func(t *testing.T) {
		response := func(txn string, content map[string]any) id.EventID {
			content["m.relates_to"] = map[string]any{"rel_type": "m.thread", "event_id": c.root, "is_falling_back": true,
				"m.in_reply_to": map[string]any{"event_id": callID}}
			return c.send(t, c.bob, matrix.ToolApprovalResponseType, txn, content)
		}
		response("bob-unknown-status", map[string]any{"status": "pending"})
		denied := response("bob-denied", map[string]any{"status": "denied", "reason": "Wrong workspace"})
		approved := response("bob-approved", map[string]any{"status": "approved", "reason": nil})
		legacy := response("bob-legacy", map[string]any{"status": "denied", "denial_reason": "Too late"})
		for _, want := range []matrix.Answer{
			{Decision: matrix.DecisionDeny, Text: "Wrong workspace", EventID: denied},
			{Decision: matrix.DecisionApprove, EventID: approved},
			{Decision: matrix.DecisionDeny, Text: "Too late", EventID: legacy},
		} {
			want.Key, want.CardEvent, want.Room, want.Thread, want.Sender, want.Gesture =
				"approval/7", callID, c.room, c.root, c.bob.UserID, matrix.GestureMindRoomResponse
			if got := withoutTime(t, nextAnswer(t, rec)); got != want {
				t.Fatalf("answer = %+v\nwant %+v", got, want)
			}
		}
	})

	t.Run("ModeCommandsAreRead", func(t *testing.T) {
		inThread := c.send(t, c.bob, event.EventMessage, "bob-mode", map[string]any{"msgtype": "m.text", "body": "!mode coder minimal",
			"m.relates_to": threadOf(c.root)})
		outside := c.send(t, c.carol, event.EventMessage, "carol-mode", map[string]any{"msgtype": "m.text", "body": "!mode coder fast"})
		for _, want := range []matrix.ModeCommand{
			{Agent: "coder", Mode: matrix.ModeMinimal, Sender: c.bob.UserID, Room: c.room, Thread: c.root, EventID: inThread},
			{Malformed: true, Sender: c.carol.UserID, Room: c.room, EventID: outside},
		} {
			if got := nextMode(t, rec); got != want {
				t.Fatalf("mode command = %+v\nwant %+v", got, want)
			}
		}
	})

	t.Run("CloseEditsTheCardWithWhoDecided", func(t *testing.T) {
		closing := matrix.Closing{How: matrix.HowApproved, By: "@bob:localhost", At: decidedAt, Note: "ship <it>"}
		edit, err := surface.Close(ctx, call, callID, closing)
		if err != nil {
			t.Fatal(err)
		}
		again, err := surface.Close(ctx, call, callID, closing)
		if err != nil {
			t.Fatal(err)
		}
		if again != edit {
			t.Fatalf("closing again made %s, want the edit %s", again, edit)
		}
		edits := c.relations(t, callID, event.RelReplace, edit, again)
		if len(edits) != 1 || edits[0].ID != edit {
			t.Fatalf("the card has %d edits, want the one edit %s", len(edits), edit)
		}
		closed := callCardFields(c)
		maps.Copy(closed, map[string]any{
			"body":              "Approved: shell.exec",
			"formatted_body":    "<p><strong>Run a tool call</strong></p><p>Requested by coder</p><pre><code>make deploy &lt;prod&gt;</code></pre><p><strong>Approved by @bob:localhost at 2026-12-05 16:05 UTC</strong></p><p>Note: ship &lt;it&gt;</p>",
			"io.turncli.card":   map[string]any{"key": "approval/7", "kind": "call_approval", "version": 1, "actions": []any{}, "closed": "approved"},
			"status":            "approved",
			"resolved_by":       "@bob:localhost",
			"resolved_at":       "2026-12-05T16:05:00+00:00",
			"resolution_reason": "ship <it>",
		})
		want := maps.Clone(closed)
		want["m.new_content"] = closed
		want["m.relates_to"] = map[string]any{"rel_type": "m.replace", "event_id": string(callID)}
		typ, sender, content := c.read(t, edit)
		if typ != "io.mindroom.tool_approval" || sender != c.bot.UserID || content != canonical(t, want) {
			t.Fatalf("edit = %s from %s %s\nwant io.mindroom.tool_approval from %s %s", typ, sender, content, c.bot.UserID, canonical(t, want))
		}
	})

	plan := planCard(c)
	planID, err := surface.Post(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	const escapedPlan = `<p><strong>&lt;b&gt;Plan&lt;/b&gt; approval</strong></p>` +
		`<p>&lt;a href=&#34;https://evil.example&#34;&gt;click&lt;/a&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;</p>` +
		`<pre><code>1. drop &lt;/code&gt;&lt;/pre&gt;&lt;img src=x&gt;</code></pre>`

	t.Run("UntrustedTextIsEscapedInTheFormattedBody", func(t *testing.T) {
		typ, sender, content := c.read(t, planID)
		want := canonical(t, map[string]any{
			"msgtype": "m.text",
			"body": "<b>Plan</b> approval\n<a href=\"https://evil.example\">click</a> & <script>alert(1)</script>\n" +
				"1. drop </code></pre><img src=x>\nReact ✅ to approve or ❌ to deny; reply to this message to request changes.",
			"format":          "org.matrix.custom.html",
			"formatted_body":  escapedPlan + `<p><em>React ✅ to approve or ❌ to deny; reply to this message to request changes.</em></p>`,
			"m.mentions":      map[string]any{},
			"io.turncli.card": map[string]any{"key": "plan/3", "kind": "plan_approval", "version": 2, "actions": []any{"approve", "deny", "comment"}},
			"m.relates_to":    threadOf(c.root),
		})
		if typ != "m.room.message" || sender != c.bot.UserID || content != want {
			t.Fatalf("card = %s from %s %s\nwant m.room.message from %s %s", typ, sender, content, c.bot.UserID, want)
		}
	})

	t.Run("AReplyToACardThatTakesCommentsComments", func(t *testing.T) {
		reply := c.send(t, c.carol, event.EventMessage, "carol-comment", realReply(c.root, planID, "add a rollback step"))
		got := withoutTime(t, nextAnswer(t, rec))
		want := matrix.Answer{Key: "plan/3", CardEvent: planID, Room: c.room, Thread: c.root, Sender: c.carol.UserID,
			Decision: matrix.DecisionComment, Text: "add a rollback step", Gesture: matrix.GestureReply, EventID: reply}
		if got != want {
			t.Fatalf("answer = %+v\nwant %+v", got, want)
		}
	})

	t.Run("AClosedMessageCardSaysWhoDecided", func(t *testing.T) {
		edit, err := surface.Close(ctx, plan, planID, matrix.Closing{How: matrix.HowDenied, By: "@carol:localhost", At: decidedAt})
		if err != nil {
			t.Fatal(err)
		}
		body := "<b>Plan</b> approval\n<a href=\"https://evil.example\">click</a> & <script>alert(1)</script>\n" +
			"1. drop </code></pre><img src=x>\nDenied by @carol:localhost at 2026-12-05 16:05 UTC"
		html := escapedPlan + `<p><strong>Denied by @carol:localhost at 2026-12-05 16:05 UTC</strong></p>`
		closed := map[string]any{
			"msgtype": "m.text", "body": body, "format": "org.matrix.custom.html", "formatted_body": html,
			"m.mentions":      map[string]any{},
			"io.turncli.card": map[string]any{"key": "plan/3", "kind": "plan_approval", "version": 2, "actions": []any{}, "closed": "denied"},
		}
		want := maps.Clone(closed)
		want["body"], want["formatted_body"] = "* "+body, "* "+html
		want["m.new_content"] = closed
		want["m.relates_to"] = map[string]any{"rel_type": "m.replace", "event_id": string(planID)}
		typ, sender, content := c.read(t, edit)
		if typ != "m.room.message" || sender != c.bot.UserID || content != canonical(t, want) {
			t.Fatalf("edit = %s from %s %s\nwant m.room.message from %s %s", typ, sender, content, c.bot.UserID, canonical(t, want))
		}
	})

	t.Run("ANoticeAnswersInTheThread", func(t *testing.T) {
		const refusal = "@carol:localhost only linked accounts can decide"
		notice, err := surface.Notice(ctx, c.room, c.root, carolReply, refusal)
		if err != nil {
			t.Fatal(err)
		}
		typ, sender, content := c.read(t, notice)
		want := canonical(t, map[string]any{"msgtype": "m.notice", "body": refusal, "m.mentions": map[string]any{},
			"m.relates_to": map[string]any{"rel_type": "m.thread", "event_id": string(c.root), "is_falling_back": false,
				"m.in_reply_to": map[string]any{"event_id": string(carolReply)}}})
		if typ != "m.room.message" || sender != c.bot.UserID || content != want {
			t.Fatalf("notice = %s from %s %s\nwant m.room.message from %s %s", typ, sender, content, c.bot.UserID, want)
		}
	})

	t.Run("ReportChunksArriveInOrder", func(t *testing.T) {
		chunks := []string{"part one <b>", "part two &", "part three"}
		ids, err := surface.PostReport(ctx, matrix.Report{Key: "job/9", Version: 1, Room: c.room, Thread: c.root, Chunks: chunks})
		if err != nil {
			t.Fatal(err)
		}
		var inThread []id.EventID
		for _, evt := range c.relations(t, c.root, event.RelThread, ids...) {
			for _, sent := range ids {
				if evt.ID == sent {
					inThread = append(inThread, evt.ID)
				}
			}
		}
		if fmt.Sprint(inThread) != fmt.Sprint(ids) || len(ids) != len(chunks) {
			t.Fatalf("the thread holds the report as %v, want %d chunks in the order sent %v", inThread, len(chunks), ids)
		}
		for i, chunk := range chunks {
			typ, sender, content := c.read(t, ids[i])
			want := canonical(t, map[string]any{"msgtype": "m.text", "body": chunk, "m.mentions": map[string]any{},
				"m.relates_to": threadOf(c.root)})
			if typ != "m.room.message" || sender != c.bot.UserID || content != want {
				t.Fatalf("chunk %d = %s from %s %s\nwant m.room.message from %s %s", i, typ, sender, content, c.bot.UserID, want)
			}
		}
	})

	t.Run("ARestartedListenerResumesWithoutReplaying", func(t *testing.T) {
		stop()
		// While no listener runs: a reaction redacted before anyone read it, and an edit of
		// Carol's reply. Neither is an answer, and the answers read before are not read again.
		withdrawn := c.react(t, c.bob, "bob-withdrawn", planID, "👎")
		if _, err := c.bob.RedactEvent(ctx, c.room, withdrawn, mautrix.ReqRedact{TxnID: "bob-redact"}); err != nil {
			t.Fatal(err)
		}
		edited := &event.MessageEventContent{MsgType: event.MsgText, Body: "fine by me"}
		edited.SetEdit(carolReply)
		c.send(t, c.carol, event.EventMessage, "carol-edit", edited)

		// An answer given while no listener ran is read when one runs again.
		whileStopped := c.react(t, c.bob, "bob-deny-plan", planID, "❌")

		rec, _ := listen(t, c.bot, cursor)
		approve := c.react(t, c.bob, "bob-approve-plan", planID, "✅")
		for _, want := range []matrix.Answer{
			{Decision: matrix.DecisionDeny, EventID: whileStopped},
			{Decision: matrix.DecisionApprove, EventID: approve},
		} {
			want.Key, want.CardEvent, want.Room, want.Thread, want.Sender, want.Gesture =
				"plan/3", planID, c.room, c.root, c.bob.UserID, matrix.GestureReaction
			if got := withoutTime(t, nextAnswer(t, rec)); got != want {
				t.Fatalf("the restarted listener's answer = %+v\nwant %+v", got, want)
			}
		}
	})
}
