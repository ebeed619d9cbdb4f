package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goslack "github.com/slack-go/slack"
	"github.com/turncli/turncli/internal/slackfake"
)

const testSecret = "8f742231b10e8888abcd99yyyzzz85a5"

type tLogWriter struct{ t *testing.T }

func (w tLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// endpoint is the interactivity handler on a loopback server, its Web API on fakeSlack.
type endpoint struct {
	fake    *slackfake.Fake
	handler *Handler
	url     string
}

// newEndpoint serves a Handler; with run, its Run drains the queue until the test ends.
func newEndpoint(t *testing.T, cfg HandlerConfig, run bool) *endpoint {
	t.Helper()
	fake, api := newFakeSlack(t)
	cfg.SigningSecret = testSecret
	cfg.Logger = slog.New(slog.NewTextHandler(tLogWriter{t}, nil))
	if cfg.QueueSize == 0 {
		cfg.QueueSize = 8
	}
	if cfg.Decide == nil {
		cfg.Decide = func(context.Context, Answer) (string, error) { return "", nil }
	}
	if cfg.OpenForm == nil {
		cfg.OpenForm = func(context.Context, Answer) (Card, error) { return Card{}, errors.New("no forms here") }
	}
	h, err := NewHandler(NewClient(api), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if run {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = h.Run(ctx) })
		t.Cleanup(func() { cancel(); wg.Wait() })
	}
	return &endpoint{fake: fake, handler: h, url: srv.URL}
}

// signedBody form-encodes an interaction payload as Slack sends it.
func signedBody(t *testing.T, payload any) string {
	t.Helper()
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return url.Values{"payload": {string(b)}}.Encode()
}

func signature(ts int64, body string) string {
	mac := hmac.New(sha256.New, []byte(testSecret))
	fmt.Fprintf(mac, "v0:%d:%s", ts, body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// send posts body with the given headers and returns the status and response text.
func (e *endpoint) send(t *testing.T, body string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(text)
}

// signed returns the headers Slack would send for body at ts.
func signed(ts time.Time, body string) http.Header {
	return http.Header{
		"X-Slack-Request-Timestamp": {strconv.FormatInt(ts.Unix(), 10)},
		"X-Slack-Signature":         {signature(ts.Unix(), body)},
	}
}

// click is a block_actions payload of user U42 in team T1 on the card at 1700000000.000001.
func click(actionID, value, actionTS string) map[string]any {
	return map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": "U42", "team_id": "T1"},
		"team":       map[string]any{"id": "T1"},
		"channel":    map[string]any{"id": "C1"},
		"container":  map[string]any{"type": "message", "message_ts": "1700000000.000001", "channel_id": "C1", "thread_ts": "1699999999.000100"},
		"trigger_id": "trig-" + actionTS,
		"actions":    []any{map[string]any{"type": "button", "action_id": actionID, "block_id": "turncli.actions", "value": value, "action_ts": actionTS}},
	}
}

func TestSignedRequestsOnly(t *testing.T) {
	e := newEndpoint(t, HandlerConfig{}, false)
	now := time.Now()
	body := signedBody(t, click("turncli.approve", "3:approval/7", "1700000001.000001"))
	valid := signed(now, body)
	upper := signed(now, body)
	upper.Set("X-Slack-Signature", "v0="+strings.ToUpper(strings.TrimPrefix(valid.Get("X-Slack-Signature"), "v0=")))
	zeroed := signed(now, body)
	zeroed.Set("X-Slack-Signature", "v0="+strings.Repeat("0", 64))
	other := signedBody(t, click("turncli.deny", "3:approval/7", "1700000001.000002"))

	for _, tc := range []struct {
		name   string
		body   string
		header http.Header
		status int
		text   string
	}{
		{"ValidRequestIsAcknowledged", body, valid, 200, ""},
		{"SameRequestAgainIsAReplay", body, signed(now, body), 401, "replayed request\n"},
		{"ReplayInOtherHexCaseIsAReplay", body, upper, 401, "replayed request\n"},
		{"WrongSignatureIsRefused", other, zeroed, 401, "invalid signature\n"},
		{"SignatureOfAnotherBodyIsRefused", other, signed(now, body), 401, "invalid signature\n"},
		{"MissingHeadersAreRefused", other, http.Header{}, 401, "missing signature headers\n"},
		{"SixMinutesOldIsRefused", other, signed(now.Add(-6*time.Minute), other), 401, "timestamp is too old\n"},
		{"BodyOverOneMiBIsRefused", strings.Repeat("a", maxBody+1), http.Header{}, 413, "request body too large\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, text := e.send(t, tc.body, tc.header)
			if status != tc.status || text != tc.text {
				t.Errorf("got %d %q, want %d %q", status, text, tc.status, tc.text)
			}
		})
	}
	if n := len(e.handler.queue); n != 1 {
		t.Errorf("%d answers queued, want only the valid request's", n)
	}
	e.fake.NoMoreCalls()
}

func TestButtonIsAcknowledgedBeforeItIsDecided(t *testing.T) {
	started := make(chan Answer, 1)
	release := make(chan struct{})
	e := newEndpoint(t, HandlerConfig{Decide: func(_ context.Context, a Answer) (string, error) {
		started <- a
		<-release
		return "", errors.New("Only the requester may approve <@U1>.")
	}}, true)
	body := signedBody(t, click("turncli.approve", "3:approval/7", "1700000001.000001"))

	// Decide cannot return before release is closed, and release is closed only once the
	// response is in: the acknowledgement does not wait for the decision.
	if status, text := e.send(t, body, signed(time.Now(), body)); status != 200 || text != "" {
		t.Fatalf("got %d %q", status, text)
	}
	got := <-started
	close(release)
	want := Answer{
		ItemKey: "approval/7", Version: 3, UserID: "U42", TeamID: "T1", Channel: "C1",
		MessageTS: "1700000000.000001", Decision: ActionApprove, Gesture: GestureButton,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	notice := e.fake.Next()
	wantNotice := map[string]string{"channel": "C1", "user": "U42", "text": "Only the requester may approve &lt;@U1&gt;."}
	if notice.Method != "chat.postEphemeral" || !sameValues(notice.Values, wantNotice) {
		t.Errorf("refusal posted as %s %v, want %v", notice.Method, notice.Values, wantNotice)
	}
}

// sameValues says whether got has every want value.
func sameValues(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func TestFullQueueAsksToTryAgain(t *testing.T) {
	e := newEndpoint(t, HandlerConfig{QueueSize: 1}, false)
	for i, actionTS := range []string{"1700000001.000001", "1700000001.000002"} {
		body := signedBody(t, click("turncli.deny", "3:approval/7", actionTS))
		if status, text := e.send(t, body, signed(time.Now(), body)); status != 200 || text != "" {
			t.Fatalf("click %d: got %d %q", i+1, status, text)
		}
	}
	notice := e.fake.Next()
	if want := map[string]string{"channel": "C1", "user": "U42", "text": BusyText}; notice.Method != "chat.postEphemeral" || !sameValues(notice.Values, want) {
		t.Errorf("busy notice %s %v, want %v", notice.Method, notice.Values, want)
	}

	body := signedBody(t, commentSubmission("I would rather not"))
	status, text := e.send(t, body, signed(time.Now(), body))
	if want := `{"response_action":"errors","errors":{"comment":"turncli is busy; try again in a moment."}}` + "\n"; status != 200 || text != want {
		t.Errorf("busy submission got %d %q, want 200 %q", status, text, want)
	}
	e.fake.NoMoreCalls()
}

func commentSubmission(text string) map[string]any {
	return map[string]any{
		"type": "view_submission",
		"user": map[string]any{"id": "U42", "team_id": "T1"},
		"team": map[string]any{"id": "T1"},
		"view": map[string]any{
			"id": "V1", "callback_id": "turncli.comment|3:approval/7",
			"private_metadata": `{"item":"approval/7","version":3,"channel":"C1","message_ts":"1700000000.000001"}`,
			"state":            map[string]any{"values": map[string]any{"comment": map[string]any{"answer": map[string]any{"type": "plain_text_input", "value": text}}}},
		},
	}
}

func questionCard() Card {
	return Card{
		ItemKey: "question/12", Kind: KindQuestion, Version: 4, Channel: "C1", ThreadTS: "1699999999.000100",
		Title:   "Release <!here> plan",
		Actions: []Action{ActionAnswer},
		Form: &Form{Presentation: PresentationModal, Revision: 5, Questions: []Question{
			{ID: "goal", Prompt: "What is the goal?", Kind: QuestionText, Required: true},
			{ID: "env", Prompt: "Where?", Kind: QuestionSingle, Required: true, Options: []Option{{"Staging", "staging"}, {"Production", "prod"}}},
			{ID: "extras", Prompt: "Also", Kind: QuestionMulti, Options: []Option{{"Notes", "a"}, {"Tags", "b"}}},
		}},
	}
}

func TestAnswerButtonOpensTheFormAndItsSubmissionIsAnAnswer(t *testing.T) {
	opened := make(chan Answer, 1)
	decided := make(chan Answer, 1)
	e := newEndpoint(t, HandlerConfig{
		OpenForm: func(_ context.Context, a Answer) (Card, error) { opened <- a; return questionCard(), nil },
		Decide:   func(_ context.Context, a Answer) (string, error) { decided <- a; return "Answers saved.", nil },
	}, true)

	body := signedBody(t, click("turncli.answer", "4:question/12", "1700000001.000001"))
	if status, text := e.send(t, body, signed(time.Now(), body)); status != 200 || text != "" {
		t.Fatalf("got %d %q", status, text)
	}
	if a := <-opened; a.UserID != "U42" || a.ItemKey != "question/12" || a.Decision != ActionAnswer {
		t.Errorf("OpenForm asked with %+v", a)
	}
	open := e.fake.Next()
	if open.Method != "views.open" {
		t.Fatalf("call %s, want views.open", open.Method)
	}
	var req struct {
		TriggerID string                   `json:"trigger_id"`
		View      goslack.ModalViewRequest `json:"view"`
	}
	if err := json.Unmarshal([]byte(open.Values["json"]), &req); err != nil {
		t.Fatal(err)
	}
	wantMeta := `{"item":"question/12","version":4,"revision":5,"channel":"C1","message_ts":"1700000000.000001"}`
	if req.TriggerID != "trig-1700000001.000001" || req.View.CallbackID != "turncli.form|5:question/12" || req.View.PrivateMetadata != wantMeta {
		t.Errorf("views.open trigger %q callback %q metadata %s", req.TriggerID, req.View.CallbackID, req.View.PrivateMetadata)
	}
	var view struct {
		Blocks []struct {
			Type     string `json:"type"`
			ID       string `json:"block_id"`
			Optional bool   `json:"optional"`
			Label    struct{ Text string }
			Text     struct{ Text string }
			Element  struct {
				Type    string
				Options []struct{ Value string }
			}
		} `json:"blocks"`
	}
	if err := json.Unmarshal(mustJSON(t, req.View), &view); err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, b := range view.Blocks {
		if b.Type == "section" {
			blocks = append(blocks, "section "+b.Text.Text)
			continue
		}
		var values []string
		for _, o := range b.Element.Options {
			values = append(values, o.Value)
		}
		blocks = append(blocks, fmt.Sprintf("%s %s %q %s optional=%v %v", b.Type, b.ID, b.Label.Text, b.Element.Type, b.Optional, values))
	}
	wantBlocks := []string{
		"section *Release &lt;!here&gt; plan*",
		`input q.goal "What is the goal?" plain_text_input optional=false []`,
		`input q.env "Where?" radio_buttons optional=false [staging prod]`,
		`input q.extras "Also" checkboxes optional=true [a b]`,
	}
	if diff := cmp.Diff(wantBlocks, blocks); diff != "" {
		t.Errorf("modal blocks (-want +got):\n%s", diff)
	}

	submission := map[string]any{
		"type": "view_submission",
		"user": map[string]any{"id": "U42", "team_id": "T1"},
		"team": map[string]any{"id": "T1"},
		"view": map[string]any{
			"id": "V1", "callback_id": req.View.CallbackID, "private_metadata": req.View.PrivateMetadata,
			"state": map[string]any{"values": map[string]any{
				"q.goal":   map[string]any{"answer": map[string]any{"type": "plain_text_input", "value": "ship it"}},
				"q.env":    map[string]any{"answer": map[string]any{"type": "radio_buttons", "selected_option": map[string]any{"value": "prod"}}},
				"q.extras": map[string]any{"answer": map[string]any{"type": "checkboxes", "selected_options": []any{map[string]any{"value": "a"}, map[string]any{"value": "b"}}}},
			}},
		},
	}
	body = signedBody(t, submission)
	if status, text := e.send(t, body, signed(time.Now(), body)); status != 200 || text != "" {
		t.Fatalf("submission got %d %q", status, text)
	}
	want := Answer{
		ItemKey: "question/12", Version: 4, Revision: 5, UserID: "U42", TeamID: "T1", Channel: "C1",
		MessageTS: "1700000000.000001", Decision: ActionAnswer, Gesture: GestureModalSubmission,
		Form: map[string][]string{"goal": {"ship it"}, "env": {"prod"}, "extras": {"a", "b"}},
	}
	if diff := cmp.Diff(want, <-decided); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if reply := e.fake.Next(); reply.Method != "chat.postEphemeral" || !sameValues(reply.Values, map[string]string{"channel": "C1", "user": "U42", "text": "Answers saved."}) {
		t.Errorf("reply %s %v", reply.Method, reply.Values)
	}
}

func TestCommentButtonOpensAModalAndItsTextIsTheAnswer(t *testing.T) {
	decided := make(chan Answer, 1)
	e := newEndpoint(t, HandlerConfig{Decide: func(_ context.Context, a Answer) (string, error) { decided <- a; return "", nil }}, true)
	body := signedBody(t, click("turncli.comment", "3:approval/7", "1700000001.000001"))
	if status, _ := e.send(t, body, signed(time.Now(), body)); status != 200 {
		t.Fatalf("got %d", status)
	}
	open := e.fake.Next()
	wantMeta := `{"item":"approval/7","version":3,"channel":"C1","message_ts":"1700000000.000001"}`
	if open.Method != "views.open" || !strings.Contains(open.Values["json"], `"callback_id":"turncli.comment|3:approval/7"`) ||
		!strings.Contains(open.Values["json"], `"private_metadata":`+strconv.Quote(wantMeta)) {
		t.Errorf("call %s %s", open.Method, open.Values["json"])
	}
	body = signedBody(t, commentSubmission("not before <!channel> agrees"))
	if status, text := e.send(t, body, signed(time.Now(), body)); status != 200 || text != "" {
		t.Fatalf("submission got %d %q", status, text)
	}
	want := Answer{
		ItemKey: "approval/7", Version: 3, UserID: "U42", TeamID: "T1", Channel: "C1", MessageTS: "1700000000.000001",
		Decision: ActionComment, Text: "not before <!channel> agrees", Gesture: GestureModalSubmission,
	}
	if diff := cmp.Diff(want, <-decided); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
}

func TestRefusedFormIsNotOpenedAndTheRefusalIsShown(t *testing.T) {
	e := newEndpoint(t, HandlerConfig{OpenForm: func(context.Context, Answer) (Card, error) {
		return Card{}, errors.New("Only the person asked may answer.")
	}}, false)
	body := signedBody(t, click("turncli.answer", "4:question/12", "1700000001.000001"))
	if status, text := e.send(t, body, signed(time.Now(), body)); status != 200 || text != "" {
		t.Fatalf("got %d %q", status, text)
	}
	notice := e.fake.Next()
	if want := map[string]string{"channel": "C1", "user": "U42", "text": "Only the person asked may answer."}; notice.Method != "chat.postEphemeral" || !sameValues(notice.Values, want) {
		t.Errorf("call %s %v, want the refusal", notice.Method, notice.Values)
	}
	e.fake.NoMoreCalls()
}

func TestReplayGuardForgetsOnlyWhatTheWindowRefuses(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	g := newReplayGuard(2, func() time.Time { return now })
	for _, step := range []struct {
		sig  string
		want replayVerdict
	}{{"a", firstSeen}, {"a", replayed}, {"b", firstSeen}, {"c", guardFull}} {
		if got := g.accept(step.sig, now); got != step.want {
			t.Errorf("accept(%s) = %d, want %d", step.sig, got, step.want)
		}
	}
	now = now.Add(signatureWindow)
	if got := g.accept("c", now); got != guardFull {
		t.Errorf("at the window's edge accept(c) = %d, want still full", got)
	}
	now = now.Add(time.Second)
	if got := g.accept("c", now); got != firstSeen || len(g.seen) != 1 {
		t.Errorf("past the window accept(c) = %d with %d remembered, want first seen with 1", got, len(g.seen))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
