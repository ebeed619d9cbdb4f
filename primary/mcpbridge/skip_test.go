package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/turncli/turncli/internal/testmcp"
	"github.com/turncli/turncli/primary/catalog"
)

// logRecorder keeps a toolkit's log lines (JSON) and passes them on to t.Log.
type logRecorder struct {
	t   *testing.T
	mu  sync.Mutex
	buf bytes.Buffer
}

func recordLogs(t *testing.T) (*slog.Logger, *logRecorder) {
	r := &logRecorder{t: t}
	return slog.New(slog.NewJSONHandler(r, &slog.HandlerOptions{Level: slog.LevelDebug})), r
}

func (r *logRecorder) Write(p []byte) (int, error) {
	r.t.Log(strings.TrimRight(string(p), "\n"))
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// lines returns the recorded lines whose message is msg.
func (r *logRecorder) lines(msg string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(r.buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			r.t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func (r *logRecorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

func TestMCPBadToolsAreLeftOutOneByOne(t *testing.T) {
	depths := fmt.Sprintf("%d,%d", catalog.MaxSchemaDepth, catalog.MaxSchemaDepth+1)
	atBound, overBound := fmt.Sprintf("depth_%d", catalog.MaxSchemaDepth), fmt.Sprintf("depth_%d", catalog.MaxSchemaDepth+1)

	t.Run("BadToolsAreAbsentAndTheOthersStayCallableThroughTheCatalog", func(t *testing.T) {
		logger, logs := recordLogs(t)
		tk := mount(t, stdioConfig("-odd-tools", "-schema-depths", depths), Options{Logger: logger})
		reg := catalog.NewRegistry()
		if err := reg.Register(context.Background(), tk); err != nil {
			t.Fatal(err)
		}
		view := reg.Snapshot(nil)
		for _, good := range []string{"greet", "add", atBound} {
			if _, err := view.Resolve(context.Background(), "srv", good); err != nil {
				t.Fatalf("resolve %s: %v", good, err)
			}
		}
		for _, bad := range []string{testmcp.OddName, "too_deep", overBound, "broken_schema"} {
			if _, err := view.Resolve(context.Background(), "srv", bad); err == nil || !strings.Contains(err.Error(), "Unknown function") {
				t.Errorf("resolve %q = %v, want an unknown function", bad, err)
			}
		}
		if got := mustCall(t, tk, "greet", map[string]any{"name": "Ada"}); got != `"Hello, Ada!"` {
			t.Errorf("greet = %s", got)
		}
		if got := mustCall(t, tk, atBound, nil); got != `"`+atBound+`"` {
			t.Errorf("%s = %s", atBound, got)
		}

		want := map[string]SkipReason{
			testmcp.OddName: SkipInvalidName,
			"too_deep":      SkipInvalidSchema,
			overBound:       SkipInvalidSchema,
			"broken_schema": SkipInvalidSchema,
			"greet":         SkipDuplicate,
		}
		got := map[string]SkipReason{}
		for _, s := range tk.Skipped() {
			got[s.Name] = s.Reason
			if s.Err == "" {
				t.Errorf("skipped %q says no reason", s.Name)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("skipped = %v, want %v", got, want)
		}

		lines := logs.lines("MCP tool skipped")
		logged := map[string]any{}
		for _, l := range lines {
			if l["mcp_server"] != "srv" || l["err"] == "" || l["level"] != "WARN" {
				t.Errorf("skip line %v lacks the server, the rule or the level", l)
			}
			logged[fmt.Sprint(l["tool"])] = l["reason"]
		}
		wantLogged := map[string]any{}
		for name, reason := range want {
			wantLogged[logText(name, maxLoggedName)] = string(reason)
		}
		if fmt.Sprint(logged) != fmt.Sprint(wantLogged) {
			t.Errorf("logged skips %v, want %v", logged, wantLogged)
		}
		if _, ok := logged[`ring\abell`]; !ok {
			t.Errorf("the control character of %q is not escaped in the log", testmcp.OddName)
		}
		if strings.ContainsRune(logs.text(), '\a') {
			t.Errorf("a control character from a tool name reached the log")
		}
	})

	t.Run("TheFirstOfTwoToolsWithOneNameIsKept", func(t *testing.T) {
		tk := mount(t, stdioConfig("-odd-tools"), Options{})
		def, err := tk.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var greets []string
		for _, f := range def.Functions {
			if f.Name == "greet" {
				greets = append(greets, f.Description)
			}
		}
		if len(greets) != 1 || greets[0] != "Greet someone by name." {
			t.Errorf("greet listed as %q, want only the first listing", greets)
		}
	})

	t.Run("SchemaAtTheDepthBoundIsKeptOneLevelDeeperIsLeftOut", func(t *testing.T) {
		tk := mount(t, stdioConfig("-schema-depths", depths), Options{})
		def, err := tk.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		kept := map[string]bool{}
		for _, f := range def.Functions {
			kept[f.Name] = true
		}
		if !kept[atBound] || kept[overBound] {
			t.Errorf("kept %s: %v, %s: %v; want only the first", atBound, kept[atBound], overBound, kept[overBound])
		}
		for _, s := range tk.Skipped() {
			if s.Name == overBound && (s.Reason != SkipInvalidSchema || !strings.Contains(s.Err, "nested 64 levels deep")) {
				t.Errorf("%s skipped as %+v", overBound, s)
			}
		}
	})
}

func TestLogTextEscapesAndBoundsUntrustedText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"greet", "greet"},
		{"grüße 日本", "grüße 日本"},
		{"ring\abell", `ring\abell`},
		{"a\x1b[31mred", `a\x1b[31mred`},
		{"line\nforged=1", `line\nforged=1`},
		{"txt.\u202eexe", `txt.\u202eexe`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`back\slash "q"`, `back\\slash \"q\"`},
		{strings.Repeat("é", 200), strings.Repeat("é", 128) + "…"}, // 256 bytes, cut on a rune boundary
	} {
		if got := logText(tc.in, maxLoggedName); got != tc.want {
			t.Errorf("logText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
