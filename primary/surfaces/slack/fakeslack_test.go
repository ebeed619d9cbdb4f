package slack

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

// fakeSlack records the Web API calls this package makes, on slacktest's loopback server. Its own
// chat.postMessage gives every message a distinct ts (slacktest's gives whole seconds) and keeps
// the messages, with their metadata, for conversations.replies; overriding slacktest's
// chat.postMessage and chat.postEphemeral also keeps its websocket queue goroutines from leaking.
type fakeSlack struct {
	t   *testing.T
	srv *slacktest.Server
	// calls holds more than any test makes, so a handler never waits for the test to read.
	calls chan call

	mu       sync.Mutex
	seq      int
	messages []fakeMessage
}

// call is one recorded Web API call: its method and its form values (or, for views.open, its
// JSON body under "json").
type call struct {
	method string
	values map[string]string
}

type fakeMessage struct {
	Channel  string                 `json:"-"`
	TS       string                 `json:"ts"`
	ThreadTS string                 `json:"thread_ts,omitempty"`
	Text     string                 `json:"text"`
	Metadata *goslack.SlackMetadata `json:"metadata,omitempty"`
}

func newFakeSlack(t *testing.T) (*fakeSlack, *goslack.Client) {
	t.Helper()
	f := &fakeSlack{t: t, calls: make(chan call, 1000)}
	f.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/chat.postMessage", f.postMessage)
		c.Handle("/chat.update", f.update)
		c.Handle("/chat.postEphemeral", f.postEphemeral)
		c.Handle("/views.open", f.viewsOpen)
		c.Handle("/conversations.replies", f.replies)
	})
	f.srv.Start()
	t.Cleanup(f.srv.Stop)
	return f, goslack.New("xoxb-test", goslack.OptionAPIURL(f.srv.GetAPIURL()))
}

// next returns the next recorded call; a test that expects a call blocks until it comes.
func (f *fakeSlack) next() call { return <-f.calls }

// noMoreCalls fails when a call was recorded that the test did not take.
func (f *fakeSlack) noMoreCalls() {
	f.t.Helper()
	select {
	case c := <-f.calls:
		f.t.Fatalf("unexpected call %s %v", c.method, c.values)
	default:
	}
}

func (f *fakeSlack) record(method string, r *http.Request) call {
	if err := r.ParseForm(); err != nil {
		f.t.Errorf("%s: %v", method, err)
	}
	c := call{method: method, values: map[string]string{}}
	for k := range r.PostForm {
		c.values[k] = r.PostForm.Get(k)
	}
	f.calls <- c
	return c
}

func (f *fakeSlack) reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		f.t.Errorf("encode reply: %v", err)
	}
}

func (f *fakeSlack) postMessage(w http.ResponseWriter, r *http.Request) {
	c := f.record("chat.postMessage", r)
	f.mu.Lock()
	f.seq++
	m := fakeMessage{Channel: c.values["channel"], TS: fmt.Sprintf("1700000000.%06d", f.seq), ThreadTS: c.values["thread_ts"], Text: c.values["text"]}
	if md := c.values["metadata"]; md != "" {
		m.Metadata = &goslack.SlackMetadata{}
		if err := json.Unmarshal([]byte(md), m.Metadata); err != nil {
			f.t.Errorf("metadata: %v", err)
		}
	}
	f.messages = append(f.messages, m)
	f.mu.Unlock()
	f.reply(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS})
}

func (f *fakeSlack) update(w http.ResponseWriter, r *http.Request) {
	c := f.record("chat.update", r)
	f.reply(w, map[string]any{"ok": true, "channel": c.values["channel"], "ts": c.values["ts"], "text": c.values["text"]})
}

func (f *fakeSlack) postEphemeral(w http.ResponseWriter, r *http.Request) {
	f.record("chat.postEphemeral", r)
	f.reply(w, map[string]any{"ok": true, "message_ts": "1700000000.999999"})
}

func (f *fakeSlack) viewsOpen(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("views.open: %v", err)
	}
	f.calls <- call{method: "views.open", values: map[string]string{"json": string(body)}}
	f.reply(w, map[string]any{"ok": true, "view": map[string]any{"id": "V1"}})
}

// replies serves conversations.replies a page of `limit` messages at a time, the cursor being
// the index of the next one; metadata only with include_all_metadata, as Slack does.
func (f *fakeSlack) replies(w http.ResponseWriter, r *http.Request) {
	c := f.record("conversations.replies", r)
	f.mu.Lock()
	var thread []fakeMessage
	for _, m := range f.messages {
		if m.Channel == c.values["channel"] && (m.TS == c.values["ts"] || m.ThreadTS == c.values["ts"]) {
			if c.values["include_all_metadata"] != "1" {
				m.Metadata = nil
			}
			thread = append(thread, m)
		}
	}
	f.mu.Unlock()
	start, _ := strconv.Atoi(c.values["cursor"])
	limit, _ := strconv.Atoi(c.values["limit"])
	end := min(start+limit, len(thread))
	page := map[string]any{"ok": true, "messages": thread[start:end], "has_more": end < len(thread)}
	if end < len(thread) {
		page["response_metadata"] = map[string]any{"next_cursor": strconv.Itoa(end)}
	}
	f.reply(w, page)
}

// blocksOf decodes the blocks of a recorded message call into plain JSON values.
func blocksOf(t *testing.T, c call) []map[string]any {
	t.Helper()
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(c.values["blocks"]), &blocks); err != nil {
		t.Fatalf("%s blocks %q: %v", c.method, c.values["blocks"], err)
	}
	return blocks
}

// blockTexts lists each block as "<type>: <text>", buttons as "button <action_id>=<value>".
func blockTexts(blocks []map[string]any) []string {
	var out []string
	for _, b := range blocks {
		switch b["type"] {
		case "section":
			out = append(out, "section: "+b["text"].(map[string]any)["text"].(string))
		case "context":
			for _, e := range b["elements"].([]any) {
				out = append(out, "context: "+e.(map[string]any)["text"].(string))
			}
		case "actions":
			for _, e := range b["elements"].([]any) {
				el := e.(map[string]any)
				out = append(out, fmt.Sprintf("button %s=%s", el["action_id"], el["value"]))
			}
		default:
			out = append(out, fmt.Sprint(b["type"]))
		}
	}
	return out
}

// blocksJSON encodes rendered blocks as Slack receives them.
func (r rendered) blocksJSON(t *testing.T) []map[string]any {
	t.Helper()
	b, err := json.Marshal(r.blocks)
	if err != nil {
		t.Fatal(err)
	}
	return blocksOf(t, call{method: "render", values: map[string]string{"blocks": string(b)}})
}
