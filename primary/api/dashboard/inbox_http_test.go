package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// pendingApprovalRequest saves a pending request_approval prompt directly.
func pendingApprovalRequest(t *testing.T, env *testenv.Env) int64 {
	t.Helper()
	p, err := env.Primary.Internals().Store.CreatePrompt(context.Background(), store.NewPrompt{Kind: store.PromptApproval,
		Channel: "!room", Thread: "$t", Requester: "@alice", Agent: "tester", ResponseID: "r1", CallID: "c1",
		Title: "Deploy?", Details: "Deploy the release", ApproveLabel: "Approve", DenyLabel: "Deny", Deadline: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

func TestAnEmptyRequestForChangesStaysOnItsCard(t *testing.T) {
	env := testenv.Start(t)
	b := signIn(t, env, adminToken(t, env))
	for _, tc := range []struct {
		name, card, path, message string
		typed                     string
		id                        int64
	}{
		{name: "RequestChangesOnAnApprovalRequest", card: "prompt", path: "prompts", typed: "   ",
			message: "A comment needs text: say what should change.", id: pendingApprovalRequest(t, env)},
		{name: "CommentOnADurableApproval", card: "approval", path: "approvals", typed: "",
			message: "A comment needs text.", id: pendingApproval(t, env)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := strconv.FormatInt(tc.id, 10)
			resp, page := b.post("/ui/"+tc.path+"/"+id+"/decide", url.Values{"decision": {"comment"}, "csrf": {b.csrf}, "text": {tc.typed}}, nil)
			if resp.StatusCode != http.StatusUnprocessableEntity || resp.Request.URL.Path != "/ui/"+tc.path+"/"+id+"/decide" {
				t.Fatalf("status %d at %s, want 422 on the form:\n%s", resp.StatusCode, resp.Request.URL.Path, page)
			}
			card := regexp.MustCompile(`(?s)<article class="card" id="` + tc.card + `-` + id + `">.*?</article>`).FindString(page)
			want := `<p class="error" role="alert">` + tc.message + `</p><input type="text" name="text" maxlength="2000" value="` + tc.typed + `"`
			if !strings.Contains(card, want) {
				t.Errorf("the card lacks %q:\n%s", want, card)
			}
			if strings.Count(page, `class="error"`) != 1 {
				t.Errorf("the refusal shows on more than its card:\n%s", page)
			}
		})
	}
	t.Run("ATooLongTextIsKeptAsTyped", func(t *testing.T) {
		id := strconv.FormatInt(pendingApprovalRequest(t, env), 10)
		typed := strings.Repeat("<é>", 700) // 2100 characters
		resp, page := b.post("/ui/prompts/"+id+"/decide", url.Values{"decision": {"comment"}, "csrf": {b.csrf}, "text": {typed}}, nil)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("status %d:\n%s", resp.StatusCode, page)
		}
		if !strings.Contains(page, `value="`+strings.Repeat("&lt;é&gt;", 700)+`"`) {
			t.Errorf("the typed text is not kept:\n%s", page)
		}
	})
	t.Run("ACommentWithTextIsSaved", func(t *testing.T) {
		id := pendingApprovalRequest(t, env)
		resp, page := b.post("/ui/prompts/"+strconv.FormatInt(id, 10)+"/decide", url.Values{"decision": {"comment"}, "csrf": {b.csrf}, "text": {"smaller steps"}}, nil)
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/ui/inbox" || !strings.Contains(page, "Decision saved: comment.") {
			t.Fatalf("status %d at %s:\n%s", resp.StatusCode, resp.Request.URL.Path, page)
		}
		p, err := env.Primary.Internals().Store.Prompt(context.Background(), id)
		if err != nil || p.Status == store.PromptPending || p.Feedback != "smaller steps" {
			t.Errorf("prompt %+v, %v: want it decided with the comment", p, err)
		}
	})
}

// TestAnApprovalsButtonsSayWhatTheyDo: the agent's labels are shown as its words, never as a
// button's, so a deny label on the approve button cannot trick anyone into approving.
func TestAnApprovalsButtonsSayWhatTheyDo(t *testing.T) {
	env := testenv.Start(t)
	// Signed in, the primary serves: it has expired the prompts of its last run, and leaves
	// this one pending.
	b := signIn(t, env, adminToken(t, env))
	p, err := env.Primary.Internals().Store.CreatePrompt(context.Background(), store.NewPrompt{Kind: store.PromptApproval,
		Channel: "!room", Thread: "$t", Requester: "@alice", Agent: "tester", ResponseID: "r1", CallID: "c1",
		Title: "Deploy?", Details: "Deploy the release", ApproveLabel: "Deny (recommended)", DenyLabel: "Approve",
		Deadline: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	_, page := b.get("/ui/inbox")
	card := regexp.MustCompile(`(?s)<article class="card" id="prompt-` + strconv.FormatInt(p.ID, 10) + `">.*?</article>`).FindString(page)
	for _, want := range []string{
		`<button type="submit" name="decision" value="approve" class="approve">Approve</button>`,
		`<button type="submit" name="decision" value="deny" class="deny">Deny</button>`,
		`<p class="labels">Approve: Deny (recommended) · Deny: Approve</p>`,
	} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %s:\n%s", want, card)
		}
	}
}
