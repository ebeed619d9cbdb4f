package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/internal/canonjson"
)

// fakeAgentCLI is an Agent CLI server with a small catalog, enough to drive every path of
// `mindroom-agent mcp`: pages and cursors, a deferred toolkit, a descriptor readable only as a
// context document, calls that complete, fail or wait for the test, a window the test closes
// and a grant it revokes.
type fakeAgentCLI struct {
	srv *fakeServer

	mu           sync.Mutex
	toolkits     []*fakeToolkit
	pageCap      int // a tools.list page holds at most this many items, whatever the limit
	windowClosed bool
	revoked      bool
	failGets     bool
	receipts     map[string]map[string]any // call id → receipt
	calls        []map[string]any          // tools.call operations, in order
	describes    map[string]int            // toolkit.function → describes
	contextReads int
	docs         map[string]string // context documents
	submitted    chan string       // receives the call id of each call of "slow" (and of a waiting permission_prompt)
	release      chan struct{}     // closed by the test: slow calls complete
	// permission is how permission_prompt calls end: "" with an allow of their input, as the
	// primary answers once someone allowed it; permissionCancelled, permissionInterrupted,
	// permissionNoDecision as their names say; permissionWaits long-polls like slow and
	// permissionHangs answers no GET at all.
	permission string
	// rejectCalls, when set, answers every tools.call with this status and detail.
	rejectCalls *fakeRejection
	// slowWaitsForAPerson makes slow calls that are not released yet "waiting", as a call
	// that needs a person's confirmation is, instead of "running".
	slowWaitsForAPerson bool
	// rejectsWait answers a GET with a wait query 422, as a server without long polls does.
	rejectsWait bool
}

// fakeRejection is an Agent CLI rejection: an HTTP status and its detail.
type fakeRejection struct {
	status int
	detail string
}

// How the fake's permission_prompt calls end (fakeAgentCLI.permission).
const (
	permissionCancelled   = "cancelled"
	permissionInterrupted = "interrupted"
	permissionNoDecision  = "no decision"
	permissionWaits       = "waits"
	permissionHangs       = "hangs"
)

type fakeToolkit struct {
	name      string
	deferred  bool
	loaded    bool
	loadFails bool
	functions []fakeFunction
}

type fakeFunction struct {
	name, description string
	schema            string // JSON; "" for {"type":"object"}
	instructions      []string
	huge              bool // describe answers with a context document
	describeFails     bool // describe answers 422, as for a function that went away
}

// newFakeAgentCLI serves this catalog:
//
//	test: echo, fail, text, media, slow, huge (descriptor as a context document), bare (no schema type)
//	test_deferred (deferred): ping, add
//	interaction: permission_prompt
//	odd__kit: run (hashed name)
func newFakeAgentCLI(t *testing.T) *fakeAgentCLI {
	f := &fakeAgentCLI{
		pageCap:   1000,
		receipts:  map[string]map[string]any{},
		describes: map[string]int{},
		docs:      map[string]string{},
		submitted: make(chan string, 16),
		release:   make(chan struct{}),
		toolkits: []*fakeToolkit{
			{name: "test", functions: []fakeFunction{
				{name: "echo", description: "Return the arguments.", schema: `{"additionalProperties":true,"type":"object"}`,
					instructions: []string{"Test toolkit.", "Echo echoes."}},
				{name: "fail", description: "Fail.", schema: `{"properties":{"message":{"type":"string"}},"type":"object"}`},
				{name: "text", description: "Return a string."},
				{name: "media", description: "Return an attachment."},
				{name: "slow", description: "Complete when the test says."},
				{name: "huge", description: "A large schema.", huge: true},
				{name: "bare", description: "A schema without a type.", schema: `{"properties":{"x":{"type":"integer"}}}`},
			}},
			{name: "test_deferred", deferred: true, functions: []fakeFunction{
				{name: "ping", description: "Pong."},
				{name: "add", description: "Add.", schema: `{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object"}`},
			}},
			{name: "interaction", functions: []fakeFunction{
				{name: "permission_prompt", description: "Ask an operator."},
			}},
			{name: "odd__kit", functions: []fakeFunction{{name: "run", description: "Run."}}},
		},
	}
	f.srv = newFakeServer(t, f.handle)
	return f
}

// hugeSchema is the input schema of test.huge: over 32 KiB, with non-ASCII text so that pages
// counted in code points differ from bytes.
func hugeSchema() string {
	props := make([]string, 0, 300)
	for i := range 300 {
		props = append(props, fmt.Sprintf(`"option_%03d":{"description":"Réglage numéro %d, documenté pour grossir ce schéma.","type":"string"}`, i, i))
	}
	return `{"properties":{` + strings.Join(props, ",") + `},"type":"object"}`
}

func (f *fakeAgentCLI) env() map[string]string { return f.srv.env() }

func (f *fakeAgentCLI) set(change func(f *fakeAgentCLI)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *fakeAgentCLI) get(read func(f *fakeAgentCLI)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	read(f)
}

func (f *fakeAgentCLI) handle(w http.ResponseWriter, r *http.Request, body string) {
	f.mu.Lock()
	revoked := f.revoked
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+testToken || revoked {
		answer(w, 401, `{"detail":"Agent CLI authority is unavailable"}`)
		return
	}
	if r.Method == http.MethodGet {
		f.getCall(w, r)
		return
	}
	op, err := canonjson.ParseObject([]byte(body))
	if err != nil {
		answer(w, 422, `{"detail":"Invalid Agent CLI operation"}`)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	code, out := f.operate(op)
	b, _ := canonjson.Marshal(out)
	answer(w, code, string(b))
}

func detail(msg string) map[string]any { return map[string]any{"detail": msg} }

func (f *fakeAgentCLI) operate(op map[string]any) (int, any) {
	switch op["operation"] {
	case "tools.list":
		return f.list(op)
	case "tools.describe":
		return f.describe(op)
	case "context.read":
		return f.readContext(op)
	case "tools.call":
		return f.call(op)
	}
	return 422, detail("Invalid Agent CLI operation")
}

// items flattens the catalog as tools.list shows it.
func (f *fakeAgentCLI) items() []map[string]any {
	var out []map[string]any
	for _, tk := range f.toolkits {
		if tk.deferred && !tk.loaded {
			out = append(out, map[string]any{"deferred": true, "description": "Deferred.", "toolkit": tk.name})
			continue
		}
		for _, fn := range tk.functions {
			out = append(out, map[string]any{"description": fn.description, "function": fn.name, "toolkit": tk.name})
		}
	}
	return out
}

// list pages like the real server: a cursor names the last item shown, so a toolkit loading
// between pages does not shift the listing.
func (f *fakeAgentCLI) list(op map[string]any) (int, any) {
	items := f.items()
	start := 0
	if c, ok := op["cursor"].(string); ok {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		toolkit, function, found := strings.Cut(string(raw), "\x00")
		if err != nil || !found {
			return 422, detail("Invalid discovery cursor")
		}
		start = -1
		for i, it := range items {
			fn, _ := it["function"].(string)
			if it["toolkit"] == toolkit && (function == "" || fn == function) {
				start = i + 1
			}
		}
		if start < 0 {
			return 422, detail("Invalid discovery cursor")
		}
	}
	limit := 100
	if n, ok := op["limit"].(canonjson.Number); ok {
		l, _ := n.Int64()
		limit = int(l)
	}
	limit = min(limit, f.pageCap)
	end := min(start+limit, len(items))
	page := make([]any, 0, end-start)
	for _, it := range items[start:end] {
		page = append(page, it)
	}
	var next any
	if end < len(items) {
		last := items[end-1]
		fn, _ := last["function"].(string)
		next = base64.RawURLEncoding.EncodeToString([]byte(last["toolkit"].(string) + "\x00" + fn))
	}
	return 200, map[string]any{"items": page, "next_cursor": next}
}

func (f *fakeAgentCLI) find(toolkit, function string) (*fakeToolkit, *fakeFunction, int, any) {
	for _, tk := range f.toolkits {
		if tk.name != toolkit {
			continue
		}
		if tk.deferred && !tk.loaded {
			if tk.loadFails {
				return nil, nil, 422, detail("Toolkit " + toolkit + " failed to load")
			}
			tk.loaded = true
		}
		for i := range tk.functions {
			if tk.functions[i].name == function {
				return tk, &tk.functions[i], 0, nil
			}
		}
		return nil, nil, 422, detail(fmt.Sprintf("Unknown function %q in toolkit %q", function, toolkit))
	}
	return nil, nil, 422, detail(fmt.Sprintf("Unknown toolkit %q", toolkit))
}

func (f *fakeAgentCLI) describe(op map[string]any) (int, any) {
	if f.windowClosed {
		return 409, detail("Bash call has ended")
	}
	toolkit, _ := op["toolkit"].(string)
	function, _ := op["function"].(string)
	f.describes[toolkit+"."+function]++
	_, fn, code, fail := f.find(toolkit, function)
	if fn == nil {
		return code, fail
	}
	if fn.describeFails {
		return 422, detail(fmt.Sprintf("Unknown function %q in toolkit %q", function, toolkit))
	}
	schema := fn.schema
	if fn.huge {
		schema = hugeSchema()
	} else if schema == "" {
		schema = `{"type":"object"}`
	}
	instructions := []any{}
	for _, s := range fn.instructions {
		instructions = append(instructions, s)
	}
	desc := map[string]any{"description": fn.description, "function": function,
		"input_schema": json.RawMessage(schema), "instructions": instructions, "toolkit": toolkit}
	if !fn.huge {
		return 200, desc
	}
	text, _ := canonjson.Marshal(desc)
	name := "tool-schema-1"
	f.docs[name] = string(text)
	return 200, map[string]any{"context": map[string]any{"length": utf8.RuneCount(text), "name": name, "operation": "context.read"},
		"function": function, "toolkit": toolkit}
}

// readContext serves pages of at most 5000 code points, so a descriptor takes several.
func (f *fakeAgentCLI) readContext(op map[string]any) (int, any) {
	name, _ := op["name"].(string)
	doc, ok := f.docs[name]
	if !ok {
		return 422, detail("Context document is unavailable")
	}
	f.contextReads++
	offset := int64(0)
	if n, ok := op["offset"].(canonjson.Number); ok {
		offset, _ = n.Int64()
	}
	runes := []rune(doc)
	end := min(int(offset)+5000, len(runes))
	var next any
	if end < len(runes) {
		next = end
	}
	return 200, map[string]any{"name": name, "next_offset": next, "text": string(runes[offset:end])}
}

func (f *fakeAgentCLI) call(op map[string]any) (int, any) {
	if f.windowClosed {
		return 409, detail("Bash call has ended")
	}
	id, _ := op["call_id"].(string)
	toolkit, _ := op["toolkit"].(string)
	function, _ := op["function"].(string)
	args, _ := op["arguments"].(map[string]any)
	f.calls = append(f.calls, op)
	if rj := f.rejectCalls; rj != nil {
		return rj.status, detail(rj.detail)
	}
	if _, fn, code, fail := f.find(toolkit, function); fn == nil {
		return code, fail
	}
	rec := map[string]any{"attachments": []any{}, "call_id": id, "function": function, "outcome": nil,
		"parent_bash_call_id": "bash-1", "status": client.StatusQueued, "toolkit": toolkit}
	f.receipts[id] = rec
	waits := function == "permission_prompt" && (f.permission == permissionWaits || f.permission == permissionHangs)
	if function == "slow" || waits {
		f.submitted <- id
	}
	queued := map[string]any{}
	for k, v := range rec {
		queued[k] = v
	}
	switch {
	case function == "slow" || waits:
		return 200, queued
	case function == "permission_prompt":
		rec["status"], rec["outcome"] = f.permissionEnd(args)
		return 200, queued
	}
	switch function {
	case "fail":
		rec["status"], rec["outcome"] = client.StatusFailed, args["message"]
	case "text":
		rec["status"], rec["outcome"] = client.StatusCompleted, "plain text"
	case "media":
		rec["status"], rec["outcome"] = client.StatusCompleted, map[string]any{"ok": true}
		rec["attachments"] = []any{map[string]any{"kind": "image", "mime_type": "image/png", "name": "a.png"}}
	default:
		rec["status"], rec["outcome"] = client.StatusCompleted, args
	}
	return 200, queued
}

// permissionEnd is how a permission_prompt call that does not wait ends: its status and
// outcome.
func (f *fakeAgentCLI) permissionEnd(args map[string]any) (string, any) {
	switch f.permission {
	case permissionCancelled:
		return client.StatusCancelled, "Call cancelled before dispatch: the response is fenced"
	case permissionInterrupted:
		return client.StatusFailed, "Call interrupted after dispatch; effects may have occurred"
	case permissionNoDecision:
		return client.StatusCompleted, "plain text"
	}
	input := args["input"]
	if input == nil {
		input = map[string]any{}
	}
	text, _ := canonjson.Marshal(map[string]any{"behavior": "allow", "updatedInput": input})
	return client.StatusCompleted, string(text)
}

// getCall answers GET, long-polling for a slow call until the test releases it or the wait
// asked for has passed.
func (f *fakeAgentCLI) getCall(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, callsPath)
	f.mu.Lock()
	rec, ok := f.receipts[id]
	failing := f.failGets
	hangs := rec["function"] == "permission_prompt" && f.permission == permissionHangs
	waits := rec["function"] == "slow" || rec["function"] == "permission_prompt" && f.permission == permissionWaits
	f.mu.Unlock()
	if !ok {
		answer(w, 401, `{"detail":"Agent CLI authority is unavailable"}`)
		return
	}
	if failing {
		answer(w, 500, `{"detail":"internal error"}`)
		return
	}
	f.mu.Lock()
	rejectsWait := f.rejectsWait
	f.mu.Unlock()
	if rejectsWait && r.URL.Query().Has("wait") {
		answer(w, 422, `{"detail":"Invalid Agent CLI operation"}`)
		return
	}
	if hangs { // until the client gives up
		<-r.Context().Done()
		return
	}
	if waits {
		wait, _ := strconv.ParseFloat(r.URL.Query().Get("wait"), 64)
		timer := time.NewTimer(time.Duration(wait * float64(time.Second)))
		defer timer.Stop()
		select {
		case <-f.release:
			f.mu.Lock()
			rec["status"], rec["outcome"] = client.StatusCompleted, map[string]any{"slow": "done"}
			f.mu.Unlock()
		case <-timer.C:
			f.mu.Lock()
			rec["status"] = client.StatusRunning
			if f.slowWaitsForAPerson {
				rec["status"] = client.StatusWaiting
			}
			f.mu.Unlock()
		case <-r.Context().Done():
			return
		}
	}
	f.mu.Lock()
	b, _ := canonjson.Marshal(rec)
	f.mu.Unlock()
	answer(w, 200, string(b))
}
