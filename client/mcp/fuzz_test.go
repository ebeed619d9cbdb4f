package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/internal/canonjson"
)

// documentedCodes are the JSON-RPC error codes `mindroom-agent mcp --help` names.
var documentedCodes = map[string]bool{
	"-32700": true, "-32600": true, "-32601": true, "-32602": true, "-32603": true, "-32001": true, "-32002": true,
}

// FuzzMCPServe feeds fuzzed standard input to `mindroom-agent mcp` with no Agent CLI
// environment (every request that needs the Agent CLI fails at once, as in a shell without
// one) and checks what it writes: one canonical JSON-RPC response per line, with a documented
// error code when it is an error; exactly one answer per request and per line that is not a
// message, none for notifications and responses; each answer carrying its request's id; and
// exit status 0 once standard input ends.
func FuzzMCPServe(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}}` + "\r\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n\n  \n" + `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"permission_prompt","arguments":{"tool_name":"Bash"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"shell__run","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"_x_0123abcd"}}`,
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress"},{"jsonrpc":"2.0","id":8,"method":"nope"}]`,
		`[]`, `[1,2]`, `[{"jsonrpc":"2.0","method":"n"}]`, `{}`, `"x"`, `null`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":9,"method":"ping"}`, `{"jsonrpc":"2.0","id":true,"method":"ping"}`, `{"jsonrpc":"2.0","id":10}`,
		`{"jsonrpc":"2.0","id":11,"result":{}}`, `{"jsonrpc":"2.0","id":12,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":13,"method":7}`, `{"jsonrpc":"2.0","id":14,"method":"ping","params":[1]}`,
		`{"jsonrpc":"2.0","method":"ping","params":"bad"}`, `{"jsonrpc":"2.0","id":"1","method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"x__y"}}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":15}}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, "\xef\xbb\xbf{}", "{\"a\":\"\xff\"}",
		`{"jsonrpc":"2.0","id":-0.0,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":1.5e3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("é", 300) + `","method":"` + strings.Repeat("m", 300) + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		agent := client.NewAgent(client.AgentConfig{Getenv: func(string) string { return "" }, PollInterval: time.Millisecond})
		s := &mcpServer{agent: agent, round: 20 * time.Millisecond, out: &out, log: slog.New(slog.DiscardHandler)}
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if code := s.serve(ctx, bytes.NewReader(data)); code != client.ExitCompleted {
			t.Fatalf("input %.300q: exit status %d, want %d", data, code, client.ExitCompleted)
		}
		if ctx.Err() != nil {
			t.Fatalf("input %.300q: serving did not end within %v", data, waitLimit)
		}
		want := expectedAnswers(data)
		var gotLines int
		var gotIDs []string
		for line := range bytes.Lines(out.Bytes()) {
			line = bytes.TrimSuffix(line, []byte("\n"))
			gotLines++
			v, err := canonjson.Parse(line)
			if canon, _ := canonjson.Marshal(v); err != nil || !bytes.Equal(canon, line) {
				t.Fatalf("input %.300q: output line %.300q is not canonical JSON", data, line)
			}
			replies := []any{v}
			if batch, ok := v.([]any); ok {
				if len(batch) == 0 {
					t.Fatalf("input %.300q: an empty batch answer", data)
				}
				replies = batch
			}
			for _, r := range replies {
				gotIDs = append(gotIDs, checkReply(t, data, r))
			}
		}
		if want.cancels {
			if gotLines > want.lines {
				t.Fatalf("input %.300q: %d answer lines, want at most %d", data, gotLines, want.lines)
			}
			return
		}
		slices.Sort(gotIDs)
		slices.Sort(want.ids)
		if gotLines != want.lines || !slices.Equal(gotIDs, want.ids) {
			t.Fatalf("input %.300q: answers %d lines with ids %q, want %d lines with ids %q\noutput:\n%s",
				data, gotLines, gotIDs, want.lines, want.ids, out.Bytes())
		}
	})
}

// checkReply checks one JSON-RPC response and returns its id as idKey writes it.
func checkReply(t *testing.T, data []byte, v any) string {
	t.Helper()
	r, ok := v.(map[string]any)
	if !ok || len(r) != 3 || r["jsonrpc"] != "2.0" {
		t.Fatalf("input %.300q: answer %#v is not a JSON-RPC 2.0 response", data, v)
	}
	id, hasID := r["id"]
	switch id.(type) {
	case nil, string, canonjson.Number:
	default:
		t.Fatalf("input %.300q: answer id %#v is neither null, a string nor a number", data, id)
	}
	_, hasResult := r["result"]
	rpcErr, hasError := r["error"].(map[string]any)
	if !hasID || hasResult == hasError {
		t.Fatalf("input %.300q: answer %#v needs an id and exactly one of result and error", data, r)
	}
	if hasError {
		code, _ := rpcErr["code"].(canonjson.Number)
		msg, _ := rpcErr["message"].(string)
		if !documentedCodes[string(code)] || msg == "" {
			t.Fatalf("input %.300q: error %#v has an undocumented code or no message", data, rpcErr)
		}
	}
	return idKey(id)
}

// answers is what the server must write for an input: how many lines, and the ids of the
// answers they hold. cancels: the input cancels requests, whose answers may then be missing.
type answers struct {
	lines   int
	ids     []string
	cancels bool
}

// expectedAnswers decides, line by line and without the server's code, what must be answered.
func expectedAnswers(data []byte) answers {
	var want answers
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		v, err := canonjson.Parse(line)
		if err != nil {
			want.lines++
			want.ids = append(want.ids, "null")
			continue
		}
		batch, isBatch := v.([]any)
		if !isBatch {
			if id, answered := expectedAnswer(v, &want); answered {
				want.lines++
				want.ids = append(want.ids, id)
			}
			continue
		}
		if len(batch) == 0 {
			want.lines++
			want.ids = append(want.ids, "null")
			continue
		}
		answeredAny := false
		for _, e := range batch {
			if id, answered := expectedAnswer(e, &want); answered {
				answeredAny = true
				want.ids = append(want.ids, id)
			}
		}
		if answeredAny {
			want.lines++
		}
	}
	return want
}

// expectedAnswer says whether message v is answered, and with which id. JSON-RPC 2.0:
// notifications (no id) and responses are never answered; everything else is, with its id
// when that is a string or a number, else with null.
func expectedAnswer(v any, want *answers) (id string, answered bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "null", true
	}
	rawID, hasID := obj["id"]
	switch rawID.(type) {
	case string, canonjson.Number:
	default:
		if hasID {
			return "null", true
		}
	}
	if obj["jsonrpc"] != "2.0" {
		return idKey(rawID), true
	}
	method, hasMethod := obj["method"]
	_, isResult := obj["result"]
	_, isError := obj["error"]
	switch {
	case !hasMethod && hasID && (isResult || isError):
		return "", false
	case !hasMethod:
		return idKey(rawID), true
	}
	if _, isString := method.(string); !isString {
		return idKey(rawID), true
	}
	if !hasID {
		if method == "notifications/cancelled" {
			want.cancels = true
		}
		return "", false
	}
	return idKey(rawID), true
}

// FuzzMCPLineReader checks how standard input is cut into messages, with lines stretched to
// around the 1 MiB limit: every line comes back whole, without its "\n" or "\r\n", when it
// has at most maxMessageBytes bytes, and is reported too long (and dropped) when it has more.
func FuzzMCPLineReader(f *testing.F) {
	f.Add([]byte("{}\n[]\r\n"), uint8(0), uint8(4))
	f.Add([]byte("\n\r\n\r\r\nx"), uint8(1), uint8(5))
	f.Add([]byte("{\"a\":1}\n"), uint8(0), uint8(3))
	f.Add([]byte("ab\r\ncd"), uint8(1), uint8(4))
	f.Add([]byte(""), uint8(0), uint8(6))
	f.Fuzz(func(t *testing.T, data []byte, at, stretch uint8) {
		// Stretch line number at (of the fuzzed lines) to maxMessageBytes-4+stretch%8 bytes
		// (line end excluded): both sides of the limit.
		lines := bytes.SplitAfter(data, []byte("\n"))
		i := int(at) % len(lines)
		body := bytes.TrimSuffix(bytes.TrimSuffix(lines[i], []byte("\n")), []byte("\r"))
		end := lines[i][len(body):]
		if fill := maxMessageBytes - 4 + int(stretch%8) - len(body); fill > 0 {
			lines[i] = slices.Concat(bytes.Repeat([]byte("x"), fill), body, end)
		}
		input := bytes.Join(lines, nil)

		br := bufio.NewReaderSize(bytes.NewReader(input), 64<<10)
		for n, want := range lines {
			if len(want) == 0 {
				break // the last line ended at the end of input
			}
			wantLine := bytes.TrimSuffix(bytes.TrimSuffix(want, []byte("\n")), []byte("\r"))
			got, tooLong, err := readLine(br)
			switch {
			case err != nil && (!errors.Is(err, io.EOF) || n != len(lines)-1):
				t.Fatalf("line %d: %v", n, err)
			case len(wantLine) > maxMessageBytes && !tooLong:
				t.Fatalf("line %d of %d bytes is accepted; the limit is %d", n, len(wantLine), maxMessageBytes)
			case len(wantLine) <= maxMessageBytes && (tooLong || !bytes.Equal(got, wantLine)):
				t.Fatalf("line %d of %d bytes: got %d bytes, too long %v", n, len(wantLine), len(got), tooLong)
			}
		}
	})
}
