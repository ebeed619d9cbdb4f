package agentcli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/catalog"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Wire constants of the contract.
const (
	operationsPath   = "/api/agent-cli/operations"
	callsPath        = "/api/agent-cli/calls/"
	windowHeader     = "X-MindRoom-Agent-CLI-Window"
	unauthorizedBody = `{"detail":"Agent CLI authority is unavailable"}`
	invalidOperation = "Invalid Agent CLI operation"
	maxBody          = 64 * 1024
)

// startEnv starts a primary with the test toolkits and, registered after them, toolkits.
func startEnv(t *testing.T, toolkits ...catalog.Toolkit) *testenv.Env {
	t.Helper()
	env := testenv.Start(t)
	for _, tk := range toolkits {
		if err := env.Primary.Internals().Registry.Register(context.Background(), tk); err != nil {
			t.Fatalf("register %s: %v", tk.Name(), err)
		}
	}
	return env
}

// session is one response as its shells see it: the grant, one window per Bash call id, and an
// HTTP client of its own (closed at cleanup so no connection outlives the test).
type session struct {
	t       testing.TB
	env     *testenv.Env
	id      string
	url     string // MINDROOM_AGENT_CLI_URL of its shells
	grant   string
	windows map[string]string // Bash call id -> window token
	client  *http.Client
}

// open opens a response (changed by edit) and a window for Bash call "b1".
func open(t testing.TB, env *testenv.Env, edit ...func(*responsev1.OpenResponseRequest)) *session {
	t.Helper()
	s := &session{t: t, env: env, id: env.Open(t, edit...), windows: map[string]string{}, client: newClient(t)}
	s.openWindow("b1")
	if s.url != env.AgentCLIURL {
		t.Fatalf("MINDROOM_AGENT_CLI_URL of a primary shell is %q, want the loopback listener %q", s.url, env.AgentCLIURL)
	}
	return s
}

func newClient(t testing.TB) *http.Client {
	tr := &http.Transport{Proxy: nil, DisableCompression: true, ExpectContinueTimeout: time.Hour}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// openWindow opens a window for bashCallID the way the runtime does for a shell it runs itself,
// and returns the window token.
func (s *session) openWindow(bashCallID string) string {
	s.t.Helper()
	resp, err := s.env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: s.id, BashCallId: bashCallID})
	if err != nil {
		s.t.Fatalf("OpenWindow(%s): %v", bashCallID, err)
	}
	e := resp.GetEnvironment()
	if s.url == "" {
		s.url = e["MINDROOM_AGENT_CLI_URL"]
	} else if s.url != e["MINDROOM_AGENT_CLI_URL"] {
		s.t.Fatalf("MINDROOM_AGENT_CLI_URL = %q, want %q", e["MINDROOM_AGENT_CLI_URL"], s.url)
	}
	if s.grant == "" {
		s.grant = e["MINDROOM_AGENT_CLI_TOKEN"]
	} else if s.grant != e["MINDROOM_AGENT_CLI_TOKEN"] {
		s.t.Fatalf("a response's windows carry different grants")
	}
	s.windows[bashCallID] = e["MINDROOM_AGENT_CLI_WINDOW"]
	return e["MINDROOM_AGENT_CLI_WINDOW"]
}

// closeWindow drains and closes a window like the runtime does when its command exits, and
// returns the receipts the window admitted.
func (s *session) closeWindow(bashCallID string) []*responsev1.Receipt {
	s.t.Helper()
	resp, err := s.closeWindowErr(bashCallID)
	if err != nil {
		s.t.Fatalf("CloseWindow(%s): %v", bashCallID, err)
	}
	return resp
}

func (s *session) closeWindowErr(bashCallID string) ([]*responsev1.Receipt, error) {
	resp, err := s.env.Runtime.CloseWindow(context.Background(), &responsev1.CloseWindowRequest{ResponseId: s.id, BashCallId: bashCallID})
	return resp.GetReceipts(), err
}

func (s *session) closeResponse() {
	s.t.Helper()
	if _, err := s.env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: s.id}); err != nil {
		s.t.Fatalf("CloseResponse: %v", err)
	}
}

// reply is an HTTP answer of the Agent CLI.
type reply struct {
	code   int
	body   []byte
	header http.Header
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.code, r.body) }

// option changes a request before it is sent. By default a request carries the session's grant
// and the window of Bash call "b1".
type option func(*http.Request)

func inWindow(token string) option {
	return func(r *http.Request) { r.Header.Set(windowHeader, token) }
}

func withoutWindow() option { return func(r *http.Request) { r.Header.Del(windowHeader) } }

func authorization(values ...string) option {
	return func(r *http.Request) {
		r.Header.Del("Authorization")
		for _, v := range values {
			r.Header.Add("Authorization", v)
		}
	}
}

// via sends the request to another origin (a worker's sandbox proxy, say).
func via(origin string) option {
	return func(r *http.Request) {
		u, err := url.Parse(origin + r.URL.RequestURI())
		if err == nil {
			r.URL, r.Host = u, u.Host
		}
	}
}

func header(name, value string) option { return func(r *http.Request) { r.Header.Set(name, value) } }

func withContext(ctx context.Context) option {
	return func(r *http.Request) { *r = *r.WithContext(ctx) }
}

// send sends one request; it is safe to call from any goroutine.
func (s *session) send(method, path string, body io.Reader, opts ...option) (reply, error) {
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		return reply{}, err
	}
	if b, ok := body.(*bytes.Reader); ok {
		req.ContentLength = int64(b.Len())
	}
	req.Header.Set("Authorization", "Bearer "+s.grant)
	if w := s.windows["b1"]; w != "" {
		req.Header.Set(windowHeader, w)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{code: resp.StatusCode, body: data, header: resp.Header}
	if s.grant != "" && bytes.Contains(data, []byte(s.grant)) {
		return r, fmt.Errorf("reply carries the grant: %s", r)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		return r, fmt.Errorf("Content-Type %q, want application/json (%s)", ct, r)
	}
	return r, nil
}

func (s *session) do(method, path string, body []byte, opts ...option) reply {
	s.t.Helper()
	r, err := s.send(method, path, bytes.NewReader(body), opts...)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// post sends an operation document.
func (s *session) post(op string, opts ...option) reply {
	s.t.Helper()
	return s.do(http.MethodPost, operationsPath, []byte(op), opts...)
}

// get reads a receipt; query is appended as is ("" or "?wait=…").
func (s *session) get(callID, query string, opts ...option) reply {
	s.t.Helper()
	return s.do(http.MethodGet, callsPath+callID+query, nil, opts...)
}

// ok checks a success reply: 200 and a canonical JSON body.
func (s *session) ok(r reply) reply {
	s.t.Helper()
	if r.code != http.StatusOK {
		s.t.Fatalf("want 200, got %s", r)
	}
	requireCanonical(s.t, r.body)
	return r
}

// call admits a tools.call with a fresh call id and returns its receipt.
func (s *session) call(toolkit, function, args string, opts ...option) receipt {
	s.t.Helper()
	return decodeReceipt(s.t, s.post(callOp(uuid.NewString(), toolkit, function, args), opts...))
}

// await long-polls a receipt until it is terminal.
func (s *session) await(callID string) receipt {
	s.t.Helper()
	for {
		rc := decodeReceipt(s.t, s.get(callID, "?wait=60"))
		if rc.terminal() {
			return rc
		}
	}
}

// requireStatus checks an error reply: its code and a {"detail"} body containing fragment.
func requireStatus(t testing.TB, r reply, code int, fragment string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want %d with %q, got %s", code, fragment, r)
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil || len(body) != 1 {
		t.Fatalf("error body is not {\"detail\":…}: %s", r.body)
	}
	detail, _ := body["detail"].(string)
	if !strings.Contains(detail, fragment) {
		t.Fatalf("detail %q does not contain %q", detail, fragment)
	}
	requireCanonical(t, r.body)
}

func requireUnauthorized(t testing.TB, r reply) {
	t.Helper()
	if r.code != http.StatusUnauthorized || string(r.body) != unauthorizedBody {
		t.Fatalf("want 401 %s, got %s", unauthorizedBody, r)
	}
}

// requireCanonical parses body with encoding/json, writes it again with canonjson and compares.
func requireCanonical(t testing.TB, body []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, body)
	}
	want, err := canonjson.Marshal(v)
	if err != nil {
		t.Fatalf("canonjson.Marshal: %v", err)
	}
	if !bytes.Equal(want, body) {
		t.Fatalf("body is not canonical JSON:\n got %s\nwant %s", body, want)
	}
}

// receipt is the contract's receipt (section 6).
type receipt struct {
	Attachments []map[string]any `json:"attachments"`
	CallID      string           `json:"call_id"`
	Function    string           `json:"function"`
	Outcome     json.RawMessage  `json:"outcome"`
	Parent      string           `json:"parent_bash_call_id"`
	Status      string           `json:"status"`
	Toolkit     string           `json:"toolkit"`
	raw         []byte
}

func (rc receipt) terminal() bool {
	return rc.Status == "completed" || rc.Status == "failed" || rc.Status == "cancelled"
}

// outcomeText is the outcome when it is a JSON string.
func (rc receipt) outcomeText(t testing.TB) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(rc.Outcome, &s); err != nil {
		t.Fatalf("outcome is not a string: %s", rc.Outcome)
	}
	return s
}

var receiptKeys = []string{"attachments", "call_id", "function", "outcome", "parent_bash_call_id", "status", "toolkit"}

// decodeReceipt checks that r is a 200 whose canonical body has exactly the seven receipt keys.
func decodeReceipt(t testing.TB, r reply) receipt {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("want a receipt, got %s", r)
	}
	requireCanonical(t, r.body)
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &keys); err != nil {
		t.Fatalf("receipt: %v", err)
	}
	if len(keys) != len(receiptKeys) {
		t.Fatalf("receipt has keys %v, want exactly %v", mapKeys(keys), receiptKeys)
	}
	for _, k := range receiptKeys {
		if _, ok := keys[k]; !ok {
			t.Fatalf("receipt lacks %q: %s", k, r.body)
		}
	}
	var rc receipt
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rc); err != nil {
		t.Fatalf("receipt: %v: %s", err, r.body)
	}
	if rc.Attachments == nil {
		t.Fatalf("attachments must be an array: %s", r.body)
	}
	rc.raw = r.body
	return rc
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// jstr is s as a JSON string.
func jstr(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// callOp is a tools.call document; args is JSON text ("" leaves arguments out).
func callOp(id, toolkit, function, args string) string {
	op := `{"operation":"tools.call","call_id":` + jstr(id) + `,"toolkit":` + jstr(toolkit) + `,"function":` + jstr(function)
	if args != "" {
		op += `,"arguments":` + args
	}
	return op + "}"
}

func describeOp(toolkit, function string) string {
	return `{"operation":"tools.describe","toolkit":` + jstr(toolkit) + `,"function":` + jstr(function) + `}`
}

func gateArgs(name string) string { return `{"name":` + jstr(name) + `}` }

// decodeObject reads a canonical success body into a map.
func decodeObject(t testing.TB, body []byte) map[string]any {
	t.Helper()
	requireCanonical(t, body)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return m
}

// page is a tools.list or context.list result.
type page struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor *string           `json:"next_cursor"`
}

func decodePage(t testing.TB, r reply) page {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("want a page, got %s", r)
	}
	requireCanonical(t, r.body)
	var p page
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("page: %v: %s", err, r.body)
	}
	if p.Items == nil {
		t.Fatalf("page without items: %s", r.body)
	}
	return p
}

// waitBlocked returns once a goroutine of this process is parked inside frame, a function name
// as runtime.Stack prints it but without its package, e.g. "(*Response).DrainWindow(" (an
// inlined call is printed after its caller's name). Tests use it to know that the server has
// reached a blocking point before they act, without sleeping. The frame is looked for in the
// whole process, so tests that use it do not run in parallel with others.
func waitBlocked(t testing.TB, frame string) {
	t.Helper()
	guard := time.Now().Add(time.Minute) // only against hanging when the frame never shows up
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			head, _, _ := strings.Cut(g, "\n")
			parked := strings.Contains(head, "[select") || strings.Contains(head, "[chan receive") ||
				strings.Contains(head, "[sync.WaitGroup.Wait") || strings.Contains(head, "[semacquire")
			if parked && strings.Contains(g, frame) {
				return
			}
		}
		if time.Now().After(guard) {
			t.Fatalf("no goroutine is blocked in %s", frame)
		}
		runtime.Gosched()
	}
}

// fakeToolkit is a toolkit shaped by the test: its name, description, functions, and what
// Load and Call do.
type fakeToolkit struct {
	name         string
	description  string
	deferred     bool
	instructions []string
	functions    []catalog.Function
	load         func(ctx context.Context) error
	call         func(ctx context.Context, c catalog.Call) (catalog.Result, error)
}

func (f *fakeToolkit) Name() string        { return f.name }
func (f *fakeToolkit) Description() string { return f.description }
func (f *fakeToolkit) Deferred() bool      { return f.deferred }

func (f *fakeToolkit) Load(ctx context.Context) (catalog.Definition, error) {
	if f.load != nil {
		if err := f.load(ctx); err != nil {
			return catalog.Definition{}, err
		}
	}
	return catalog.Definition{Instructions: f.instructions, Functions: f.functions}, nil
}

func (f *fakeToolkit) Call(ctx context.Context, c catalog.Call) (catalog.Result, error) {
	if f.call == nil {
		return catalog.Result{Value: map[string]any{}}, nil
	}
	return f.call(ctx, c)
}

// counter is a toolkit "counter" whose function "hold" counts its runs per call id, reports each
// start, and blocks until the test releases it (or the response closes).
type counter struct {
	fakeToolkit
	mu      sync.Mutex
	runs    map[string]int
	started chan string
	release chan struct{}
}

func newCounter() *counter {
	c := &counter{runs: map[string]int{}, started: make(chan string, 16), release: make(chan struct{})}
	c.fakeToolkit = fakeToolkit{
		name: "counter", description: "Counts its runs.",
		functions: []catalog.Function{{Name: "hold", Description: "Count, then block until released."}},
		call: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			c.mu.Lock()
			c.runs[call.ID]++
			c.mu.Unlock()
			c.started <- call.ID
			select {
			case <-c.release:
				return catalog.Result{Value: map[string]any{"held": true}}, nil
			case <-ctx.Done():
				return catalog.Result{}, ctx.Err()
			}
		},
	}
	return c
}

func (c *counter) runsOf(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id]
}
