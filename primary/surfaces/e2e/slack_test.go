package e2e_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/slackfake"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/surfaces/slack"
)

// A Slack conversation's thread: its channel and the ts of its root message.
const (
	slackChannel = "C0DEPLOY"
	slackThread  = "1699999999.000100"
	slackSecret  = "slack-signing-secret"
)

// slackPrimary is a primary posting to a recording Slack Web API, with Ann (U0ANN) an admin
// and Ben (U0BEN) a member, linked to their Slack accounts, and the thread in the auto mode.
func slackPrimary(t *testing.T) (*testenv.Env, *slackfake.Fake) {
	t.Helper()
	fake := slackfake.New(t)
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Shells.EnvAllow = []string{"LANG"}
		c.Slack = slack.Settings{BotToken: "xoxb-test", SigningSecret: slackSecret, APIURL: fake.APIURL()}
	}))
	ctx := context.Background()
	db := env.Primary.Internals().Store
	for _, p := range []struct {
		user, name string
		role       store.OperatorRole
	}{{"U0ANN", "ann", store.RoleAdmin}, {"U0BEN", "ben", store.RoleMember}} {
		if _, err := operators.Add(ctx, db, p.name, p.role); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.LinkIdentity(ctx, store.NewIdentityLink{Surface: "slack", ChatUserID: p.user, Person: p.name}, "admin"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SetConversationMode(ctx, slackChannel, slackThread, store.ModeAuto, "test"); err != nil {
		t.Fatal(err)
	}
	return env, fake
}

// awaitCall takes the fake's calls until one of method comes.
func awaitCall(t *testing.T, fake *slackfake.Fake, method string) slackfake.Call {
	t.Helper()
	deadline := time.After(patience)
	for {
		calls := make(chan slackfake.Call, 1)
		go func() { calls <- fake.Next() }()
		select {
		case c := <-calls:
			if c.Method == method {
				return c
			}
		case <-deadline:
			t.Fatalf("no %s call within %v", method, patience)
		}
	}
}

// interact posts a signed interactivity request with the payload to the primary's REST
// listener, as Slack would, and returns the status and the response's text.
func interact(t *testing.T, env *testenv.Env, payload any, secret string) (int, string) {
	t.Helper()
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	body := url.Values{"payload": {string(raw)}}.Encode()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", ts, body)
	req, err := http.NewRequest(http.MethodPost, env.HTTPURL+slack.InteractionsPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(text)
}

// press is a block_actions payload: user pressed the button of the card at ts.
func press(user, ts, actionID, value string) map[string]any {
	return map[string]any{
		"type": "block_actions", "user": map[string]any{"id": user, "team_id": "T1"}, "team": map[string]any{"id": "T1"},
		"channel":    map[string]any{"id": slackChannel},
		"container":  map[string]any{"type": "message", "message_ts": ts, "channel_id": slackChannel, "thread_ts": slackThread},
		"trigger_id": "trigger-" + user,
		"actions":    []any{map[string]any{"type": "button", "action_id": actionID, "block_id": "turncli.actions", "value": value, "action_ts": ts}},
	}
}

// buttons are a message call's buttons, action id to value.
func buttons(t *testing.T, c slackfake.Call) map[string]string {
	t.Helper()
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(c.Values["blocks"]), &blocks); err != nil {
		t.Fatalf("blocks of %s: %v", c.Method, err)
	}
	out := map[string]string{}
	for _, b := range blocks {
		if b.Type == "actions" {
			for _, e := range b.Elements {
				out[e.ActionID] = e.Value
			}
		}
	}
	return out
}

// TestACommandIsApprovedByAButtonInItsSlackThread: the approval is posted in its Slack thread
// with buttons; a request Slack did not sign is refused; a member's press is refused to them
// alone; an admin's press approves it, and the card is rewritten without buttons saying who
// decided.
func TestACommandIsApprovedByAButtonInItsSlackThread(t *testing.T) {
	env, fake := slackPrimary(t)
	resp := env.Open(t, inSlackThread)
	callNative(t, env, resp, "run_in_background", `{"command":"printf shipped","label":"ship"}`)

	post := awaitCall(t, fake, "chat.postMessage")
	if post.Values["channel"] != slackChannel || post.Values["thread_ts"] != slackThread {
		t.Fatalf("card posted in %s/%s; want the thread %s/%s", post.Values["channel"], post.Values["thread_ts"], slackChannel, slackThread)
	}
	cardTS := "1700000000.000001" // the fake's first message
	b := buttons(t, post)
	approve := b["turncli.approve"]
	if approve == "" || !strings.HasSuffix(approve, ":approval/1") || b["turncli.deny"] != approve {
		t.Fatalf("buttons %v; want approve and deny of approval/1", b)
	}

	if status, text := interact(t, env, press("U0ANN", cardTS, "turncli.approve", approve), "not the secret"); status != http.StatusUnauthorized || text != "invalid signature\n" {
		t.Fatalf("a request signed with another secret: %d %q; want 401 invalid signature", status, text)
	}
	if status, _ := interact(t, env, press("U0BEN", cardTS, "turncli.approve", approve), slackSecret); status != http.StatusOK {
		t.Fatalf("Ben's press: %d; want it acknowledged", status)
	}
	refusal := awaitCall(t, fake, "chat.postEphemeral")
	if refusal.Values["user"] != "U0BEN" || !strings.Contains(refusal.Values["text"], "admin") {
		t.Errorf("refusal %v; want one to U0BEN saying only admins approve", refusal.Values)
	}
	if status, _ := interact(t, env, press("U0ANN", cardTS, "turncli.approve", approve), slackSecret); status != http.StatusOK {
		t.Fatalf("Ann's press: %d; want it acknowledged", status)
	}
	closed := awaitCall(t, fake, "chat.update")
	if closed.Values["ts"] != cardTS || len(buttons(t, closed)) != 0 || !strings.Contains(closed.Values["blocks"], "Approved") ||
		!strings.Contains(closed.Values["blocks"], "\\u003c@U0ANN\\u003e") {
		t.Errorf("closing %v; want the card at %s without buttons, approved by <@U0ANN>", closed.Values, cardTS)
	}
	ap, err := env.Primary.Internals().Store.Approval(context.Background(), 1)
	if err != nil || ap.DecidedBy != "ann" {
		t.Errorf("approval decided by %q, %v; want ann", ap.DecidedBy, err)
	}
}

// inSlackThread opens the response in the Slack thread for Ann, whom the runtime vouches for.
func inSlackThread(o *responsev1.OpenResponseRequest) {
	o.RequesterId = "ann"
	o.Conversation = &conversationv1.Conversation{Channel: slackChannel, Thread: slackThread}
	o.Origin = responsev1.Origin_ORIGIN_FOREGROUND
	o.Flags = append(o.Flags, "requester_trusted")
}

// TestAQuestionFormIsAnsweredInASlackModal: a form shown as a modal is opened from its card's
// Answer button and submitted there by its requester; another person's submission is refused
// to them alone; the card closes answered.
func TestAQuestionFormIsAnsweredInASlackModal(t *testing.T) {
	env, fake := slackPrimary(t)
	callNative(t, env, env.Open(t, inSlackThread), "ask_questions",
		`{"title":"Deploy","presentation":"modal","questions":[{"id":"env","prompt":"Where?","type":"single","options":[{"label":"Production","value":"prod"},{"label":"Staging","value":"staging"}]},{"id":"why","prompt":"Why now?","type":"text"}]}`)
	post := awaitCall(t, fake, "chat.postMessage")
	cardTS := "1700000000.000001"
	answer := buttons(t, post)["turncli.answer"]
	if !strings.HasSuffix(answer, ":question/1") {
		t.Fatalf("buttons %v; want an answer button of question/1", buttons(t, post))
	}

	submit := func(user string) {
		t.Helper()
		if status, _ := interact(t, env, press(user, cardTS, "turncli.answer", answer), slackSecret); status != http.StatusOK {
			t.Fatalf("%s's answer button: %d", user, status)
		}
		var open struct {
			TriggerID string `json:"trigger_id"`
			View      struct {
				CallbackID      string `json:"callback_id"`
				PrivateMetadata string `json:"private_metadata"`
			} `json:"view"`
		}
		if err := json.Unmarshal([]byte(awaitCall(t, fake, "views.open").Values["json"]), &open); err != nil {
			t.Fatal(err)
		}
		if open.TriggerID != "trigger-"+user {
			t.Fatalf("views.open with trigger %q; want %s's", open.TriggerID, user)
		}
		status, _ := interact(t, env, map[string]any{
			"type": "view_submission", "user": map[string]any{"id": user, "team_id": "T1"}, "team": map[string]any{"id": "T1"},
			"view": map[string]any{"id": "V1", "callback_id": open.View.CallbackID, "private_metadata": open.View.PrivateMetadata,
				"state": map[string]any{"values": map[string]any{
					"q.env": map[string]any{"answer": map[string]any{"type": "radio_buttons", "selected_option": map[string]any{"value": "prod"}}},
					"q.why": map[string]any{"answer": map[string]any{"type": "plain_text_input", "value": "the fix is ready"}},
				}}},
		}, slackSecret)
		if status != http.StatusOK {
			t.Fatalf("%s's submission: %d", user, status)
		}
	}
	submit("U0BEN")
	if refusal := awaitCall(t, fake, "chat.postEphemeral"); refusal.Values["user"] != "U0BEN" || !strings.Contains(refusal.Values["text"], "only ann, who was asked, can answer") {
		t.Errorf("refusal %v; want one to U0BEN saying only the requester answers", refusal.Values)
	}
	submit("U0ANN")
	closed := awaitCall(t, fake, "chat.update")
	if closed.Values["ts"] != cardTS || len(buttons(t, closed)) != 0 || !strings.Contains(closed.Values["blocks"], "Answered") {
		t.Errorf("closing %v; want the card answered, without buttons", closed.Values)
	}
	q, err := env.Primary.Internals().Store.QuestionRequest(context.Background(), 1)
	if err != nil || q.Status != store.QuestionSubmitted || !strings.Contains(string(q.Answers), `"values":["prod"]`) ||
		!strings.Contains(string(q.Answers), `"custom":"the fix is ready"`) {
		t.Errorf("form %v %s, %v; want it submitted with both answers", q.Status, q.Answers, err)
	}
}
