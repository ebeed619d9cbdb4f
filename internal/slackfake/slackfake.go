// Package slackfake is a recording stand-in for the Slack Web API, on slack-go's slacktest
// loopback server, for tests of the Slack surface: it records each call made, gives every
// message a distinct ts (slacktest's are whole seconds), keeps the messages with their
// metadata for conversations.replies, and, by serving chat.postMessage and
// chat.postEphemeral itself, keeps slacktest's websocket queue goroutines from leaking.
package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"

	goslack "github.com/slack-go/slack"
	"github.com/slack-go/slack/slacktest"
)

// Fake records the Web API calls made to it.
type Fake struct {
	t   *testing.T
	srv *slacktest.Server
	// calls holds more than any test makes, so a handler never waits for the test to read.
	calls chan Call

	mu       sync.Mutex
	seq      int
	messages []fakeMessage
}

// Call is one recorded Web API call: its method and its form values (or, for views.open, its
// JSON body under "json").
type Call struct {
	Method string
	Values map[string]string
}

type fakeMessage struct {
	Channel  string                 `json:"-"`
	TS       string                 `json:"ts"`
	ThreadTS string                 `json:"thread_ts,omitempty"`
	Text     string                 `json:"text"`
	Metadata *goslack.SlackMetadata `json:"metadata,omitempty"`
}

// New starts a fake, stopped when the test ends.
func New(t *testing.T) *Fake {
	t.Helper()
	f := &Fake{t: t, calls: make(chan Call, 1000)}
	f.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/chat.postMessage", f.postMessage)
		c.Handle("/chat.update", f.update)
		c.Handle("/chat.postEphemeral", f.postEphemeral)
		c.Handle("/views.open", f.viewsOpen)
		c.Handle("/conversations.replies", f.replies)
	})
	f.srv.Start()
	t.Cleanup(f.srv.Stop)
	return f
}

// APIURL is the base URL to give a Web API client.
func (f *Fake) APIURL() string { return f.srv.GetAPIURL() }

// Next returns the next recorded call; a test that expects a call blocks until it comes.
func (f *Fake) Next() Call { return <-f.calls }

// NoMoreCalls fails when a call was recorded that the test did not take.
func (f *Fake) NoMoreCalls() {
	f.t.Helper()
	select {
	case c := <-f.calls:
		f.t.Fatalf("unexpected call %s %v", c.Method, c.Values)
	default:
	}
}

func (f *Fake) record(method string, r *http.Request) Call {
	if err := r.ParseForm(); err != nil {
		f.t.Errorf("%s: %v", method, err)
	}
	c := Call{Method: method, Values: map[string]string{}}
	for k := range r.PostForm {
		c.Values[k] = r.PostForm.Get(k)
	}
	f.calls <- c
	return c
}

func (f *Fake) reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		f.t.Errorf("encode reply: %v", err)
	}
}

func (f *Fake) postMessage(w http.ResponseWriter, r *http.Request) {
	c := f.record("chat.postMessage", r)
	f.mu.Lock()
	f.seq++
	m := fakeMessage{Channel: c.Values["channel"], TS: fmt.Sprintf("1700000000.%06d", f.seq), ThreadTS: c.Values["thread_ts"], Text: c.Values["text"]}
	if md := c.Values["metadata"]; md != "" {
		m.Metadata = &goslack.SlackMetadata{}
		if err := json.Unmarshal([]byte(md), m.Metadata); err != nil {
			f.t.Errorf("metadata: %v", err)
		}
	}
	f.messages = append(f.messages, m)
	f.mu.Unlock()
	f.reply(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS})
}

func (f *Fake) update(w http.ResponseWriter, r *http.Request) {
	c := f.record("chat.update", r)
	f.reply(w, map[string]any{"ok": true, "channel": c.Values["channel"], "ts": c.Values["ts"], "text": c.Values["text"]})
}

func (f *Fake) postEphemeral(w http.ResponseWriter, r *http.Request) {
	f.record("chat.postEphemeral", r)
	f.reply(w, map[string]any{"ok": true, "message_ts": "1700000000.999999"})
}

func (f *Fake) viewsOpen(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("views.open: %v", err)
	}
	f.calls <- Call{Method: "views.open", Values: map[string]string{"json": string(body)}}
	f.reply(w, map[string]any{"ok": true, "view": map[string]any{"id": "V1"}})
}

// replies serves conversations.replies a page of `limit` messages at a time, the cursor being
// the index of the next one; metadata only with include_all_metadata, as Slack does.
func (f *Fake) replies(w http.ResponseWriter, r *http.Request) {
	c := f.record("conversations.replies", r)
	f.mu.Lock()
	var thread []fakeMessage
	for _, m := range f.messages {
		if m.Channel == c.Values["channel"] && (m.TS == c.Values["ts"] || m.ThreadTS == c.Values["ts"]) {
			if c.Values["include_all_metadata"] != "1" {
				m.Metadata = nil
			}
			thread = append(thread, m)
		}
	}
	f.mu.Unlock()
	start, _ := strconv.Atoi(c.Values["cursor"])
	limit, _ := strconv.Atoi(c.Values["limit"])
	end := min(start+limit, len(thread))
	page := map[string]any{"ok": true, "messages": thread[start:end], "has_more": end < len(thread)}
	if end < len(thread) {
		page["response_metadata"] = map[string]any{"next_cursor": strconv.Itoa(end)}
	}
	f.reply(w, page)
}
