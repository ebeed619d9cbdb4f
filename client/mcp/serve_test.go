package mcp

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/internal/canonjson"
)

// waitLimit only keeps a broken test from hanging; nothing waits for it to pass.
const waitLimit = 10 * time.Second

// mcpSession is one MCP server run by a test through pipes, exactly as `mindroom-agent mcp`
// runs it, but with a short wait between progress notifications.
type mcpSession struct {
	t     *testing.T
	stdin *io.PipeWriter
	logs  *syncBuffer

	mu      sync.Mutex
	queue   []any // messages written to stdout, not read yet
	closed  bool  // stdout ended
	arrived chan struct{}

	done     chan int
	codeOnce sync.Once
	code     int
	// stop ends serving as SIGINT or SIGTERM would.
	stop context.CancelFunc
}

// badLine is a stdout line that is not one canonical JSON value.
type badLine string

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startMCP(t *testing.T, env map[string]string, pageSize int) *mcpSession {
	t.Helper()
	return startMCPWith(t, env, pageSize, func(*client.AgentConfig) {})
}

// startMCPWith is startMCP with the configuration of its client.Agent changed by edit first.
func startMCPWith(t *testing.T, env map[string]string, pageSize int, edit func(*client.AgentConfig)) *mcpSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	m := &mcpSession{t: t, stdin: inW, logs: &syncBuffer{}, arrived: make(chan struct{}, 1), done: make(chan int, 1)}
	c := client.AgentConfig{Getenv: func(k string) string { return env[k] }, PollInterval: time.Millisecond}
	edit(&c)
	agent := client.NewAgent(c)
	s := &mcpServer{agent: agent, pageSize: pageSize, round: 20 * time.Millisecond, taskWait: 20 * time.Millisecond, now: time.Now, out: outW,
		log: slog.New(slog.NewTextHandler(m.logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	go func() {
		code := s.serve(ctx, inR)
		agent.Close()
		outW.Close()
		m.done <- code
	}()
	go m.read(outR)
	t.Cleanup(func() {
		cancel()
		inW.Close()
		m.exitCode()
		if t.Failed() {
			t.Logf("server log:\n%s", m.logs.String())
		}
	})
	return m
}

// read queues every line of stdout, parsed.
func (m *mcpSession) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var msg any = badLine(line)
		if v, err := canonjson.Parse(line); err == nil {
			if canon, err := canonjson.Marshal(v); err == nil && bytes.Equal(canon, line) {
				msg = v
			}
		}
		m.mu.Lock()
		m.queue = append(m.queue, msg)
		m.mu.Unlock()
		m.notify()
	}
	io.Copy(io.Discard, r)
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.notify()
}

func (m *mcpSession) notify() {
	select {
	case m.arrived <- struct{}{}:
	default:
	}
}

func (m *mcpSession) send(line string) {
	m.t.Helper()
	if _, err := io.WriteString(m.stdin, line+"\n"); err != nil {
		m.t.Fatalf("write stdin: %v", err)
	}
}

// next returns the next message; ok is false once stdout has ended.
func (m *mcpSession) next() (msg any, ok bool) {
	m.t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		m.mu.Lock()
		if len(m.queue) > 0 {
			msg = m.queue[0]
			m.queue = m.queue[1:]
			m.mu.Unlock()
			if bad, isBad := msg.(badLine); isBad {
				m.t.Fatalf("stdout line is not one canonical JSON value: %q", string(bad))
			}
			return msg, true
		}
		closed := m.closed
		m.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-m.arrived:
		case <-deadline.C:
			m.t.Fatalf("no message within %s (log:\n%s)", waitLimit, m.logs.String())
		}
	}
}

// object returns the next message, which must be an object.
func (m *mcpSession) object() map[string]any {
	m.t.Helper()
	msg, ok := m.next()
	if !ok {
		m.t.Fatalf("stdout ended")
	}
	obj, isObj := msg.(map[string]any)
	if !isObj {
		m.t.Fatalf("message is not an object: %v", msg)
	}
	return obj
}

// answer returns the answer to request id (JSON text), failing on any other message first.
func (m *mcpSession) answer(id string) map[string]any {
	m.t.Helper()
	obj := m.object()
	if got := idKey(obj["id"]); got != id || obj["jsonrpc"] != "2.0" {
		m.t.Fatalf("message %v, want the answer to request %s", obj, id)
	}
	return obj
}

func (m *mcpSession) request(id, method, params string) map[string]any {
	m.t.Helper()
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		line += `,"params":` + params
	}
	m.send(line + "}")
	return m.answer(id)
}

// result sends a request and returns its result, failing on an error.
func (m *mcpSession) result(id, method, params string) map[string]any {
	m.t.Helper()
	a := m.request(id, method, params)
	res, ok := a["result"].(map[string]any)
	if !ok {
		m.t.Fatalf("%s answered %v, want a result", method, a)
	}
	return res
}

// rpcError sends a request and returns its error code and message, failing on a result.
func (m *mcpSession) rpcError(id, method, params string) (code int64, message string, data map[string]any) {
	m.t.Helper()
	a := m.request(id, method, params)
	e, ok := a["error"].(map[string]any)
	if !ok {
		m.t.Fatalf("%s answered %v, want an error", method, a)
	}
	code, _ = e["code"].(canonjson.Number).Int64()
	message, _ = e["message"].(string)
	data, _ = e["data"].(map[string]any)
	return code, message, data
}

func (m *mcpSession) initialize(version string) map[string]any {
	m.t.Helper()
	res := m.result(`0`, "initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"test","version":"1"}}`)
	m.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

// exitCode closes stdin and returns the exit code of the server.
func (m *mcpSession) exitCode() int {
	m.t.Helper()
	m.stdin.Close()
	m.codeOnce.Do(func() {
		select {
		case m.code = <-m.done:
		case <-time.After(waitLimit):
			m.t.Fatalf("the server did not exit within %s", waitLimit)
		}
	})
	return m.code
}

// rest returns every message left until stdout ends.
func (m *mcpSession) rest() []any {
	m.t.Helper()
	var out []any
	for {
		msg, ok := m.next()
		if !ok {
			return out
		}
		out = append(out, msg)
	}
}

// toolNamesOf returns the names of a tools/list result.
func toolNamesOf(t *testing.T, res map[string]any) []string {
	t.Helper()
	tools, ok := res["tools"].([]any)
	if !ok {
		t.Fatalf("tools/list result %v has no tools", res)
	}
	var names []string
	for _, v := range tools {
		names = append(names, v.(map[string]any)["name"].(string))
	}
	return names
}

func toolByName(t *testing.T, res map[string]any, name string) map[string]any {
	t.Helper()
	for _, v := range res["tools"].([]any) {
		if tool := v.(map[string]any); tool["name"] == name {
			return tool
		}
	}
	t.Fatalf("tools/list has no %s: %v", name, toolNamesOf(t, res))
	return nil
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := canonjson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wholeCatalog is every tool name of the fake's catalog, in catalog order.
var wholeCatalog = []string{"test__echo", "test__fail", "test__text", "test__media", "test__slow", "test__huge", "test__bare",
	"test_deferred__ping", "test_deferred__add", "permission_prompt", hashedName(toolRef{"odd__kit", "run"}, hashDigits)}

func TestMCPProtocol(t *testing.T) {
	t.Run("InitializeAnswersWithTheClientsVersionWhenItIsServed", func(t *testing.T) {
		for _, v := range mcpProtocolVersions {
			m := startMCP(t, nil, 0)
			res := m.initialize(v)
			if res["protocolVersion"] != v {
				t.Fatalf("protocolVersion = %v, want %s", res["protocolVersion"], v)
			}
			want := `{"tools":{"listChanged":false}}`
			if v == "2025-11-25" {
				want = `{"tasks":{"requests":{"tools":{"call":{}}}},"tools":{"listChanged":false}}`
			}
			if canon(t, res["capabilities"]) != want {
				t.Fatalf("capabilities = %v", res["capabilities"])
			}
		}
	})
	t.Run("InitializeAnswersWithTheNewestVersionOtherwise", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		if res := m.initialize("2099-01-01"); res["protocolVersion"] != "2025-11-25" {
			t.Fatalf("protocolVersion = %v", res["protocolVersion"])
		}
	})
	t.Run("InitializeWithoutAVersionIsInvalidParams", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		if code, _, _ := m.rpcError(`1`, "initialize", `{}`); code != codeInvalidParams {
			t.Fatalf("code = %d", code)
		}
	})
	t.Run("PingAnswersAnEmptyResultWithTheRequestsID", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		if res := m.result(`"abc"`, "ping", ""); len(res) != 0 {
			t.Fatalf("ping result = %v", res)
		}
		if res := m.result(`7`, "ping", `{}`); len(res) != 0 {
			t.Fatalf("ping result = %v", res)
		}
	})
	t.Run("UnknownMethodsAreMethodNotFound", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		for _, method := range []string{"server/discover", "resources/list", "prompts/list", "logging/setLevel"} {
			if code, msg, _ := m.rpcError(`1`, method, `{}`); code != codeMethodNotFound || !strings.Contains(msg, method) {
				t.Fatalf("%s: code %d message %q", method, code, msg)
			}
		}
	})
	t.Run("NotificationsAndStrayResponsesAreNeverAnswered", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		m.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		m.send(`{"jsonrpc":"2.0","method":"notifications/unknown","params":{"x":1}}`)
		m.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
		m.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":"not an object"}`)
		m.send(`{"jsonrpc":"2.0","id":5,"result":{}}`)
		m.send(`{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"x"}}`)
		m.result(`1`, "ping", "")
	})
	t.Run("LinesThatAreNotJSONAreParseErrorsWithANullID", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		for _, line := range []string{`{"jsonrpc":"2.0","id":1,`, `garbage`, `{"a":1,"a":2}`} {
			m.send(line)
			a := m.object()
			if a["id"] != nil || a["error"].(map[string]any)["code"] != canonjson.Number("-32700") {
				t.Fatalf("%s answered %v", line, a)
			}
		}
	})
	t.Run("MalformedRequestsAreInvalidRequests", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		for line, id := range map[string]any{
			`{"jsonrpc":"1.0","id":1,"method":"ping"}`: canonjson.Number("1"),
			`{"jsonrpc":"2.0","id":2}`:                 canonjson.Number("2"),
			`{"jsonrpc":"2.0","id":3,"method":4}`:      canonjson.Number("3"),
			`{"jsonrpc":"2.0","id":null,"method":"x"}`: nil,
			`{"jsonrpc":"2.0","id":[1],"method":"x"}`:  nil,
			`42`: nil,
			`[]`: nil,
		} {
			m.send(line)
			a := m.object()
			if idKey(a["id"]) != idKey(id) || a["error"].(map[string]any)["code"] != canonjson.Number("-32600") {
				t.Fatalf("%s answered %v", line, a)
			}
		}
	})
	t.Run("ParamsThatAreNotAnObjectAreInvalidParams", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		if code, _, _ := m.rpcError(`1`, "ping", `[1]`); code != codeInvalidParams {
			t.Fatalf("code = %d", code)
		}
	})
	t.Run("BatchIsAnsweredWithOneArrayLeavingOutNotifications", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		m.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"nope"},7]`)
		msg, _ := m.next()
		if got := canon(t, msg); got != `[{"id":1,"jsonrpc":"2.0","result":{}},{"error":{"code":-32601,"message":"Method not found: nope"},"id":2,"jsonrpc":"2.0"},{"error":{"code":-32600,"message":"a message must be a JSON object"},"id":null,"jsonrpc":"2.0"}]` {
			t.Fatalf("batch answer %s", got)
		}
		m.send(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
		m.result(`3`, "ping", "")
	})
	t.Run("LineOverOneMebibyteIsAParseErrorAndTheNextLineIsRead", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		m.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", maxMessageBytes) + `"}}`)
		if a := m.object(); a["id"] != nil || a["error"].(map[string]any)["code"] != canonjson.Number("-32700") {
			t.Fatalf("answered %v", a)
		}
		m.result(`2`, "ping", "")
	})
	t.Run("CRLFLinesAndBlankLinesAreAccepted", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		m.send("\r\n  \n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r")
		m.answer(`1`)
	})
	t.Run("EndOfInputExitsZero", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		m.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if code := m.exitCode(); code != client.ExitCompleted {
			t.Fatalf("exit code %d", code)
		}
		if rest := m.rest(); len(rest) != 1 {
			t.Fatalf("stdout %v, want the ping's answer only", rest)
		}
	})
}

func TestMCPToolsList(t *testing.T) {
	t.Run("WithoutPageSizeTheWholeCatalogIsOnePage", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.pageCap = 3 })
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-06-18")
		res := m.result(`1`, "tools/list", "")
		if got, want := strings.Join(toolNamesOf(t, res), " "), strings.Join(wholeCatalog, " "); got != want {
			t.Fatalf("tools\n got %s\nwant %s", got, want)
		}
		if _, has := res["nextCursor"]; has {
			t.Fatalf("nextCursor = %v, want none", res["nextCursor"])
		}
		lists := 0
		for _, r := range f.srv.requests() {
			if strings.Contains(r.body, `"tools.list"`) {
				lists++
				if !strings.Contains(r.body, `"limit":1000`) {
					t.Errorf("tools.list body %s, want limit 1000", r.body)
				}
			}
		}
		if lists < 4 {
			t.Fatalf("%d tools.list requests, want one per page of 3", lists)
		}
	})
	t.Run("PageSizeGivesOneAgentCLIPagePerMCPPageUntilTheLastCursor", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 4)
		m.initialize("2025-11-25")
		var all []string
		pages := 0
		params := `{}`
		for {
			res := m.result(`1`, "tools/list", params)
			pages++
			names := toolNamesOf(t, res)
			if len(names) == 0 || len(names) > 4 {
				t.Fatalf("page %d has %d tools", pages, len(names))
			}
			all = append(all, names...)
			next, has := res["nextCursor"].(string)
			if !has {
				break
			}
			if !strings.HasPrefix(next, mcpCursorPrefix) {
				t.Fatalf("nextCursor %q is not this server's", next)
			}
			params = `{"cursor":` + canon(t, next) + `}`
		}
		if got, want := strings.Join(all, " "), strings.Join(wholeCatalog, " "); got != want {
			t.Fatalf("tools over %d pages\n got %s\nwant %s", pages, got, want)
		}
		if pages != 3 {
			t.Fatalf("%d pages, want 3 of at most 4 tools", pages)
		}
	})
	t.Run("DeferredToolkitIsLoadedAndListedByItsFunctionsInPlace", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		res := m.result(`1`, "tools/list", "")
		names := toolNamesOf(t, res)
		if names[7] != "test_deferred__ping" || names[8] != "test_deferred__add" {
			t.Fatalf("tools %v: the deferred toolkit's functions are not in its place", names)
		}
		f.get(func(f *fakeAgentCLI) {
			if f.describes["test_deferred."+loadProbe] != 1 {
				t.Errorf("load describes %v, want one", f.describes)
			}
		})
		add := toolByName(t, res, "test_deferred__add")
		if canon(t, add["inputSchema"]) != `{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object"}` {
			t.Fatalf("add schema %v", add["inputSchema"])
		}
	})
	t.Run("DeferredToolkitThatDoesNotLoadIsLeftOutAndLogged", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.toolkits[1].loadFails = true })
		m := startMCP(t, f.env(), 0)
		names := toolNamesOf(t, m.result(`1`, "tools/list", ""))
		if strings.Contains(strings.Join(names, " "), "test_deferred") || len(names) != len(wholeCatalog)-2 {
			t.Fatalf("tools %v", names)
		}
		m.exitCode()
		if log := m.logs.String(); !strings.Contains(log, "test_deferred") || !strings.Contains(log, "failed to load") {
			t.Fatalf("log does not say why test_deferred is missing:\n%s", log)
		}
	})
	t.Run("FunctionWhoseDescribeIsRejectedIsLeftOutAndLogged", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.toolkits[0].functions[2].describeFails = true })
		m := startMCP(t, f.env(), 0)
		names := toolNamesOf(t, m.result(`1`, "tools/list", ""))
		if strings.Contains(strings.Join(names, " "), "test__text") || len(names) != len(wholeCatalog)-1 {
			t.Fatalf("tools %v", names)
		}
		m.exitCode()
		if log := m.logs.String(); !strings.Contains(log, "test.text") {
			t.Fatalf("log does not say why test.text is missing:\n%s", log)
		}
	})
	t.Run("ToolCarriesDescriptionWithInstructionsSchemaAndTitle", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-06-18")
		res := m.result(`1`, "tools/list", "")
		echo := toolByName(t, res, "test__echo")
		want := `{"description":"Return the arguments.\n\nTest toolkit.\nEcho echoes.","inputSchema":{"additionalProperties":true,"type":"object"},"name":"test__echo","title":"test.echo"}`
		want = strings.Replace(want, `{"description"`, `{"annotations":{"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":false,"title":"test.echo"},"description"`, 1)
		if got := canon(t, echo); got != want {
			t.Fatalf("echo\n got %s\nwant %s", got, want)
		}
		if got := canon(t, toolByName(t, res, "test__bare")["inputSchema"]); got != `{"properties":{"x":{"type":"integer"}},"type":"object"}` {
			t.Fatalf("a schema without a type became %s", got)
		}
		if got := toolByName(t, res, "permission_prompt")["title"]; got != "interaction.permission_prompt" {
			t.Fatalf("permission_prompt title %v", got)
		}
	})
	t.Run("TitleIsLeftOutBefore20250618", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-03-26")
		if tool := toolByName(t, m.result(`1`, "tools/list", ""), "test__echo"); tool["title"] != nil {
			t.Fatalf("title %v sent to a 2025-03-26 client", tool["title"])
		}
	})
	t.Run("OversizeDescriptorIsReadBackFromItsContextDocument", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		huge := toolByName(t, m.result(`1`, "tools/list", ""), "test__huge")
		if got, want := canon(t, huge["inputSchema"]), hugeSchema(); got != want {
			t.Fatalf("huge schema is %d bytes, want the %d bytes of the context document", len(got), len(want))
		}
		if huge["description"] != "A large schema." {
			t.Fatalf("huge description %v", huge["description"])
		}
		f.get(func(f *fakeAgentCLI) {
			if f.contextReads < 2 {
				t.Errorf("%d context.read requests, want every page", f.contextReads)
			}
		})
	})
	t.Run("EachFunctionIsDescribedOncePerProcess", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		first := m.result(`1`, "tools/list", "")
		second := m.result(`2`, "tools/list", "")
		if canon(t, first) != canon(t, second) {
			t.Fatalf("second listing differs")
		}
		f.get(func(f *fakeAgentCLI) {
			for fn, n := range f.describes {
				if n != 1 {
					t.Errorf("%s described %d times", fn, n)
				}
			}
		})
	})
	t.Run("CursorThisServerDidNotIssueIsInvalidParams", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 2)
		for _, params := range []string{`{"cursor":"abc"}`, `{"cursor":"` + mcpCursorPrefix + `"}`, `{"cursor":5}`} {
			if code, _, _ := m.rpcError(`1`, "tools/list", params); code != codeInvalidParams {
				t.Fatalf("%s: code %d", params, code)
			}
		}
	})
	t.Run("StaleCursorIsAnAgentCLIErrorWithItsStatus", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 2)
		code, msg, data := m.rpcError(`1`, "tools/list", `{"cursor":"`+mcpCursorPrefix+`bm9wZQ"}`)
		if code != codeAgentCLI || !strings.Contains(msg, "Invalid discovery cursor") || canon(t, data) != `{"status":422}` {
			t.Fatalf("code %d message %q data %v", code, msg, data)
		}
	})
	t.Run("ListingAfterTheWindowEndedIsAnAgentCLIError", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.windowClosed = true })
		m := startMCP(t, f.env(), 0)
		code, msg, data := m.rpcError(`1`, "tools/list", "")
		if code != codeAgentCLI || !strings.Contains(msg, "Bash call has ended") || canon(t, data) != `{"status":409}` {
			t.Fatalf("code %d message %q data %v", code, msg, data)
		}
	})
	t.Run("RevokedGrantIsAnAuthorityError", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.revoked = true })
		m := startMCP(t, f.env(), 0)
		if code, msg, _ := m.rpcError(`1`, "tools/list", ""); code != codeAuthority || !strings.Contains(msg, "HTTP 401") {
			t.Fatalf("code %d message %q", code, msg)
		}
	})
	t.Run("MissingEnvironmentIsAnAuthorityErrorNamingTheVariable", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		if code, msg, _ := m.rpcError(`1`, "tools/list", ""); code != codeAuthority || !strings.Contains(msg, envURL) {
			t.Fatalf("code %d message %q", code, msg)
		}
	})
	t.Run("RequestsCarryTheGrantAndTheWindow", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.result(`1`, "tools/list", "")
		for _, r := range f.srv.requests() {
			if r.header.Get("Authorization") != "Bearer "+testToken || r.header.Get(windowHeader) != testWindow {
				t.Fatalf("request %s %s without the grant or the window", r.method, r.body)
			}
		}
	})
}

// callResultOf sends tools/call and returns its result.
func callResultOf(t *testing.T, m *mcpSession, id, name, args string) map[string]any {
	t.Helper()
	return m.result(id, "tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
}

// textOf returns the text of the only (or first) content item.
func textOf(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("result %v has no content", res)
	}
	item := content[0].(map[string]any)
	if item["type"] != "text" {
		t.Fatalf("content %v is not text", item)
	}
	return item["text"].(string)
}

// callIDPattern is a call id as client.Agent.NewCallID chooses it: a random version 4 UUID.
var callIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func callIDOf(t *testing.T, res map[string]any) string {
	t.Helper()
	id, _ := res["_meta"].(map[string]any)[metaCallID].(string)
	if !callIDPattern.MatchString(id) {
		t.Fatalf("_meta %v has no call id", res["_meta"])
	}
	return id
}

func TestMCPToolsCall(t *testing.T) {
	t.Run("CompletedCallGivesItsCanonicalOutcomeAndStructuredContent", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-06-18")
		res := callResultOf(t, m, `1`, "test__echo", `{"b":2, "a":"é<>"}`)
		if res["isError"] != false || textOf(t, res) != `{"a":"é<>","b":2}` || canon(t, res["structuredContent"]) != `{"a":"é<>","b":2}` {
			t.Fatalf("result %v", res)
		}
		id := callIDOf(t, res)
		f.get(func(f *fakeAgentCLI) {
			if len(f.calls) != 1 || canon(t, f.calls[0]) != `{"arguments":{"a":"é<>","b":2},"call_id":"`+id+`","function":"echo","operation":"tools.call","toolkit":"test"}` {
				t.Fatalf("calls %v", f.calls)
			}
		})
		if res["_meta"].(map[string]any)[metaStatus] != client.StatusCompleted {
			t.Fatalf("_meta %v", res["_meta"])
		}
	})
	t.Run("StructuredContentIsLeftOutBefore20250618", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2024-11-05")
		if res := callResultOf(t, m, `1`, "test__echo", `{"a":1}`); res["structuredContent"] != nil || textOf(t, res) != `{"a":1}` {
			t.Fatalf("result %v", res)
		}
	})
	t.Run("MissingArgumentsAreAnEmptyObject", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		if res := m.result(`1`, "tools/call", `{"name":"test__echo"}`); textOf(t, res) != `{}` {
			t.Fatalf("result %v", res)
		}
	})
	t.Run("StringOutcomeIsTheTextItself", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		if res := callResultOf(t, m, `1`, "test__text", `{}`); textOf(t, res) != "plain text" || res["structuredContent"] != nil || res["isError"] != false {
			t.Fatalf("result %v", res)
		}
	})
	t.Run("FailedCallIsAnErrorResultWithItsOutcome", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-06-18")
		res := callResultOf(t, m, `1`, "test__fail", `{"message":"boom"}`)
		if res["isError"] != true || textOf(t, res) != "boom" || res["structuredContent"] != nil {
			t.Fatalf("result %v", res)
		}
		if res["_meta"].(map[string]any)[metaStatus] != client.StatusFailed {
			t.Fatalf("_meta %v", res["_meta"])
		}
	})
	t.Run("AttachmentsFollowAsASecondTextContent", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		res := callResultOf(t, m, `1`, "test__media", `{}`)
		if got := canon(t, res["content"]); got != `[{"text":"{\"ok\":true}","type":"text"},{"text":"{\"attachments\":[{\"kind\":\"image\",\"mime_type\":\"image/png\",\"name\":\"a.png\"}]}","type":"text"}]` {
			t.Fatalf("content %s", got)
		}
	})
	t.Run("InteractionFunctionIsCalledByItsBareName", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		res := callResultOf(t, m, `1`, "permission_prompt", `{"tool_name":"Bash"}`)
		if res["isError"] != false {
			t.Fatalf("result %v", res)
		}
		f.get(func(f *fakeAgentCLI) {
			if f.calls[0]["toolkit"] != "interaction" || f.calls[0]["function"] != "permission_prompt" {
				t.Fatalf("call %v", f.calls[0])
			}
		})
	})
	t.Run("HashedNameIsResolvedThroughTheListingWithoutDescribes", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.pageCap = 2 })
		m := startMCP(t, f.env(), 0)
		res := callResultOf(t, m, `1`, hashedName(toolRef{"odd__kit", "run"}, hashDigits), `{}`)
		if res["isError"] != false {
			t.Fatalf("result %v", res)
		}
		f.get(func(f *fakeAgentCLI) {
			if f.calls[0]["toolkit"] != "odd__kit" || len(f.describes) != 0 {
				t.Fatalf("call %v after describes %v", f.calls[0], f.describes)
			}
		})
	})
	t.Run("UnknownToolNameIsInvalidParams", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		for _, name := range []string{"_nothing_12345678", "interaction__permission_prompt", "no such tool"} {
			code, msg, _ := m.rpcError(`1`, "tools/call", `{"name":"`+name+`","arguments":{}}`)
			if code != codeInvalidParams || msg != "Unknown tool: "+name {
				t.Fatalf("%s: code %d message %q", name, code, msg)
			}
		}
	})
	t.Run("UnknownFunctionOfAWellFormedNameIsTheServersErrorResult", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		res := callResultOf(t, m, `1`, "test__nope", `{}`)
		if res["isError"] != true || !strings.Contains(textOf(t, res), `Agent CLI request was rejected: Unknown function "nope"`) {
			t.Fatalf("result %v", res)
		}
	})
	t.Run("CallAfterTheWindowEndedIsAnErrorResultNamingIt", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.windowClosed = true })
		m := startMCP(t, f.env(), 0)
		res := callResultOf(t, m, `1`, "test__echo", `{}`)
		if res["isError"] != true || textOf(t, res) != "Agent CLI request was rejected: Bash call has ended" {
			t.Fatalf("result %v", res)
		}
		callIDOf(t, res)
	})
	t.Run("RevokedGrantIsAnAuthorityError", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.revoked = true })
		m := startMCP(t, f.env(), 0)
		if code, _, _ := m.rpcError(`1`, "tools/call", `{"name":"test__echo"}`); code != codeAuthority {
			t.Fatalf("code %d", code)
		}
	})
	t.Run("UnreachableAgentCLIIsAnErrorResultNamingTheCallID", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		env := f.env()
		f.srv.srv.Close()
		m := startMCP(t, env, 0)
		res := callResultOf(t, m, `1`, "test__echo", `{}`)
		id := callIDOf(t, res)
		if res["isError"] != true || !strings.Contains(textOf(t, res), "may have been submitted") || !strings.Contains(textOf(t, res), "calls wait "+id) {
			t.Fatalf("result %v", res)
		}
	})
	t.Run("TransportFailureWhileWaitingIsAnErrorResultNamingTheCallID", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.failGets = true })
		m := startMCP(t, f.env(), 0)
		res := callResultOf(t, m, `1`, "test__slow", `{}`)
		id := callIDOf(t, res)
		if res["isError"] != true || !strings.Contains(textOf(t, res), "HTTP 500") || !strings.Contains(textOf(t, res), "calls wait "+id) {
			t.Fatalf("result %v", res)
		}
	})
	t.Run("ArgumentsThatAreNotAnObjectAndMissingNamesAreInvalidParams", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		for _, params := range []string{`{"name":"test__echo","arguments":[1]}`, `{"arguments":{}}`, `{"name":3}`} {
			if code, _, _ := m.rpcError(`1`, "tools/call", params); code != codeInvalidParams {
				t.Fatalf("%s: code %d", params, code)
			}
		}
	})
	t.Run("EveryCallHasAFreshCallID", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		a := callIDOf(t, callResultOf(t, m, `1`, "test__echo", `{}`))
		b := callIDOf(t, callResultOf(t, m, `2`, "test__echo", `{}`))
		if a == b {
			t.Fatalf("both calls have id %s", a)
		}
	})
	t.Run("SlowCallIsLongPolledUntilTerminalWithProgressOnTheWay", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-06-18")
		m.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test__slow","arguments":{},"_meta":{"progressToken":"tok"}}}`)
		id := <-f.submitted
		for want := 1; want <= 2; want++ {
			p := m.object()
			if p["method"] != "notifications/progress" || canon(t, p["params"]) != `{"message":"call `+id+` is running","progress":`+canon(t, want)+`,"progressToken":"tok"}` {
				t.Fatalf("message %v, want progress %d", p, want)
			}
		}
		close(f.release)
		var res map[string]any
		for res == nil {
			msg := m.object()
			if msg["method"] == "notifications/progress" {
				continue
			}
			res, _ = m.checkAnswer(msg, `1`)["result"].(map[string]any)
		}
		if textOf(t, res) != `{"slow":"done"}` || callIDOf(t, res) != id {
			t.Fatalf("result %v", res)
		}
		for _, r := range f.srv.requests() {
			if r.method == "GET" && !strings.HasPrefix(r.query, "wait=") {
				t.Fatalf("GET %s?%s does not long-poll", r.path, r.query)
			}
		}
	})
	t.Run("PingIsAnsweredWhileACallWaits", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test__slow"}}`)
		<-f.submitted
		m.result(`2`, "ping", "")
		close(f.release)
		m.answer(`1`)
	})
	t.Run("EndOfInputExitsZeroAfterTheCallInProgressIsAnswered", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test__slow"}}`)
		<-f.submitted
		m.stdin.Close()
		select {
		case code := <-m.done:
			t.Fatalf("exited %d with a call in progress", code)
		default:
		}
		close(f.release)
		if res := m.answer(`1`)["result"].(map[string]any); textOf(t, res) != `{"slow":"done"}` {
			t.Fatalf("result %v", res)
		}
		if code := m.exitCode(); code != client.ExitCompleted {
			t.Fatalf("exit code %d", code)
		}
	})
	t.Run("CancelledRequestIsNeverAnsweredAndItsCallIsNotCancelled", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"test__slow"}}`)
		id := <-f.submitted
		m.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c","reason":"user"}}`)
		if code := m.exitCode(); code != client.ExitCompleted {
			t.Fatalf("exit code %d", code)
		}
		if rest := m.rest(); len(rest) != 0 {
			t.Fatalf("stdout %v, want no answer to the cancelled request", rest)
		}
		for _, r := range f.srv.requests() {
			if r.method == "POST" && !strings.Contains(r.body, `"tools.call"`) {
				t.Fatalf("request %s after the cancellation", r.body)
			}
		}
		f.get(func(f *fakeAgentCLI) {
			if st := f.receipts[id]["status"]; st == client.StatusCancelled {
				t.Fatalf("the call was cancelled")
			}
		})
	})
}

// checkAnswer fails unless msg answers request id.
func (m *mcpSession) checkAnswer(msg map[string]any, id string) map[string]any {
	m.t.Helper()
	if idKey(msg["id"]) != id {
		m.t.Fatalf("message %v, want the answer to %s", msg, id)
	}
	return msg
}

func TestMCPCommandLine(t *testing.T) {
	t.Run("EndOfInputExitsZeroWithNothingOnStdout", func(t *testing.T) {
		o := runCLI(t, nil, "", "mcp")
		if o.code != client.ExitCompleted || o.stdout != "" {
			t.Fatalf("code %d stdout %q stderr %q", o.code, o.stdout, o.stderr)
		}
	})
	t.Run("ScriptedSessionAnswersEveryRequestOnItsOwnLine", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test__echo","arguments":{"x":1}}}` + "\n"
		o := runCLI(t, f.env(), in, "mcp", "--page-size=5")
		if o.code != client.ExitCompleted || strings.Count(o.stdout, "\n") != 2 || !strings.Contains(o.stdout, `"structuredContent":{"x":1}`) {
			t.Fatalf("code %d stdout %q stderr %q", o.code, o.stdout, o.stderr)
		}
	})
}
