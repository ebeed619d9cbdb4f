package threadapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
)

// TestAJobsReportArrivesInChunksAndResumesMidReport: an approved command's job ends and its
// report follows its closing in chunks of the size asked, in order, each whole characters;
// a subscriber that resumes from a chunk's cursor gets the rest of the report, not the item
// again.
func TestAJobsReportArrivesInChunksAndResumesMidReport(t *testing.T) {
	env := start(t)
	addOperator(t, env, "ada", store.RoleAdmin)
	link(t, env, "@ada:example.org", "ada")
	const thread = "$report"
	setMode(t, env, thread, store.ModeAuto)
	view := &threadv1.SubscribeRequest{MaxChunkBytes: 1024, Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}}
	sub := subscribe(t, env, view)
	callNative(t, env, openIn(t, env, "@alice:example.org", thread), "run_in_background", `{"command":"printf 'é%.0s' {1..1500}","label":"long"}`)
	approval := sub.next(t).GetItem().GetItemKey()
	if _, err := feedClient(env).DecideItem(context.Background(), &threadv1.DecideItemRequest{ItemKey: approval,
		Identity: matrix("@ada:example.org"), Decision: threadv1.ItemAction_ITEM_ACTION_APPROVE}); err != nil {
		t.Fatal(err)
	}
	var job *threadv1.ThreadItem
	for job == nil {
		if it := sub.next(t).GetItem(); it.GetKind() == threadv1.ItemKind_ITEM_KIND_JOB && it.GetChange() == threadv1.ItemChange_ITEM_CHANGE_CLOSED {
			job = it
		}
	}
	jobID, err := strconv.ParseInt(strings.TrimPrefix(job.GetItemKey(), "job/"), 10, 64)
	if err != nil {
		t.Fatalf("job key %q", job.GetItemKey())
	}
	report, err := env.Primary.Internals().Store.ContinuationByKey(context.Background(), jobs.ReportKey(jobID))
	if err != nil {
		t.Fatal(err)
	}
	n := int(job.GetReportChunks())
	if job.GetTitle() != "long" || job.GetClosing().GetHow() != threadv1.ClosingHow_CLOSING_HOW_FINISHED || job.GetClosing().GetNote() == "" ||
		n < 3 || job.GetReportBytes() != uint64(len(report.Text)) || !strings.Contains(report.Text, "éé") {
		t.Fatalf("finished job %v; report of %d bytes", job, len(report.Text))
	}
	_, err = feedClient(env).DecideItem(context.Background(), &threadv1.DecideItemRequest{ItemKey: job.GetItemKey(),
		Identity: matrix("@ada:example.org"), Decision: threadv1.ItemAction_ITEM_ACTION_APPROVE})
	refusedWith(t, err, "InvalidArgument", "a job takes no decision")
	var joined strings.Builder
	var resume string
	for i := range n {
		m := sub.next(t)
		c := m.GetChunk()
		if m.GetItem() != nil || c.GetItemKey() != job.GetItemKey() || int(c.GetIndex()) != i || int(c.GetCount()) != n ||
			len(c.GetText()) > 1024 || len(c.GetText()) == 0 || !utf8.ValidString(c.GetText()) {
			t.Fatalf("message %d: %v", i, m)
		}
		joined.WriteString(c.GetText())
		if i == 1 {
			resume = m.GetCursor()
		}
	}
	if joined.String() != report.Text {
		t.Fatal("the chunks do not join to the report")
	}

	t.Run("ResumingMidReportSendsTheRestOnly", func(t *testing.T) {
		view.Cursor = resume
		again := subscribe(t, env, view)
		var rest strings.Builder
		for i := 2; i < n; i++ {
			m := again.next(t)
			if m.GetItem() != nil || int(m.GetChunk().GetIndex()) != i {
				t.Fatalf("after the resume, message %v; want chunk %d", m, i)
			}
			rest.WriteString(m.GetChunk().GetText())
		}
		if !strings.HasSuffix(report.Text, rest.String()) || rest.Len() == 0 {
			t.Fatal("the resumed chunks are not the report's rest")
		}
	})
}

// TestResumingAfterARestartReplaysNothingAndMissesNothing: the feed is in the store, so a
// cursor kept across a primary's restart (same SQLite file) goes on exactly after it.
func TestResumingAfterARestartReplaysNothingAndMissesNothing(t *testing.T) {
	dir := t.TempDir()
	const thread = "$restart"
	view := func(cursor string) *threadv1.SubscribeRequest {
		return &threadv1.SubscribeRequest{Cursor: cursor, Conversation: &conversationv1.Conversation{Channel: channel, Thread: thread}}
	}
	var cursor, second string
	if !t.Run("FirstPrimaryTellsTwoApprovalsAndOneIsHandled", func(t *testing.T) {
		env := start(t, testenv.WithStateDir(dir))
		setMode(t, env, thread, store.ModeAuto)
		sub := subscribe(t, env, view(""))
		resp := openIn(t, env, "@alice:example.org", thread)
		callNative(t, env, resp, "run_in_background", `{"command":"printf one"}`)
		callNative(t, env, resp, "run_in_background", `{"command":"printf two"}`)
		first := sub.next(t)
		cursor = first.GetCursor()
		second = sub.next(t).GetItem().GetItemKey()
		if first.GetItem().GetText() != "printf one" || second == first.GetItem().GetItemKey() {
			t.Fatalf("first %v, second %s", first, second)
		}
	}) {
		return
	}
	t.Run("SecondPrimaryGoesOnAfterTheCursor", func(t *testing.T) {
		env := start(t, testenv.WithStateDir(dir))
		sub := subscribe(t, env, view(cursor))
		callNative(t, env, openIn(t, env, "@alice:example.org", thread), "run_in_background", `{"command":"printf three"}`)
		if it := sub.next(t).GetItem(); it.GetItemKey() != second || it.GetText() != "printf two" {
			t.Fatalf("first after the restart: %v; want %s", it, second)
		}
		if it := sub.next(t).GetItem(); it.GetText() != "printf three" || it.GetChange() != threadv1.ItemChange_ITEM_CHANGE_OPENED {
			t.Fatalf("second after the restart: %v; want the new approval", it)
		}
	})
}

// TestTheFeedOverREST: the runtime subscribes and decides through the REST gateway.
func TestTheFeedOverREST(t *testing.T) {
	env := start(t)
	addOperator(t, env, "ada", store.RoleAdmin)
	link(t, env, "@ada:example.org", "ada")
	const thread = "$rest"
	setMode(t, env, thread, store.ModeAuto)
	callNative(t, env, openIn(t, env, "@alice:example.org", thread), "run_in_background", `{"command":"printf rest"}`)
	httpc := &http.Client{Transport: &http.Transport{}}
	defer httpc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	do := func(method, path, body string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, method, env.HTTPURL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
		resp, err := httpc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := do(http.MethodGet, "/v1/thread-events:subscribe?conversation.channel=%21room:example.org&conversation.thread=%24rest&max_card_bytes=4", "")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("subscribe: status %d", resp.StatusCode)
	}
	lines := bufio.NewScanner(resp.Body)
	type message struct {
		Result struct {
			Cursor string `json:"cursor"`
			Item   *struct {
				ItemKey          string `json:"item_key"`
				Preview          string `json:"preview"`
				PreviewTruncated bool   `json:"preview_truncated"`
				State            string `json:"state"`
			} `json:"item"`
		} `json:"result"`
	}
	var msgs []message
	for len(msgs) < 2 && lines.Scan() {
		var m message
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", lines.Text(), err)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) != 2 || msgs[0].Result.Item != nil || msgs[1].Result.Item == nil {
		t.Fatalf("messages %+v", msgs)
	}
	it := msgs[1].Result.Item
	if it.Preview != "prin" || !it.PreviewTruncated || it.State != "ITEM_STATE_OPEN" || msgs[1].Result.Cursor == "" {
		t.Fatalf("item %+v", it)
	}
	decided := do(http.MethodPost, "/v1/thread-items/"+it.ItemKey+":decide",
		`{"identity":{"surface":"matrix","chat_user_id":"@ada:example.org"},"decision":"ITEM_ACTION_DENY","text":"not now","card_bytes":4}`)
	defer decided.Body.Close()
	var out struct {
		Item struct {
			ItemKey string `json:"item_key"`
			State   string `json:"state"`
			Closing struct {
				Decision string `json:"decision"`
				By       string `json:"by"`
				Note     string `json:"note"`
			} `json:"closing"`
		} `json:"item"`
	}
	if err := json.NewDecoder(decided.Body).Decode(&out); err != nil || decided.StatusCode != http.StatusOK {
		t.Fatalf("decide: status %d, %v", decided.StatusCode, err)
	}
	if out.Item.ItemKey != it.ItemKey || out.Item.State != "ITEM_STATE_CLOSED" || out.Item.Closing.Decision != "ITEM_ACTION_DENY" ||
		out.Item.Closing.By != "ada" || out.Item.Closing.Note != "not now" {
		t.Fatalf("decided %+v", out.Item)
	}
}
