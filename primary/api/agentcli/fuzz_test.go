package agentcli

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
)

// contractField is one field of an operation as the contract's section 5 writes it, kept apart
// from the parser's own table so that the fuzz target checks the parser against the contract.
type contractField struct {
	required bool
	valid    func(v any) bool
}

func selector(v any) bool {
	s, ok := v.(string)
	return ok && utf8.ValidString(s) && utf8.RuneCountInString(s) >= 1 && utf8.RuneCountInString(s) <= 128
}

func intIn(least, most int64) func(any) bool {
	return func(v any) bool {
		n, ok := v.(canonjson.Number)
		if !ok || !n.IsInteger() {
			return false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil && i >= least && i <= most
	}
}

func cursor(v any) bool {
	s, ok := v.(string)
	return v == nil || ok && s != "" && utf8.RuneCountInString(s) <= 1024
}

var contractOperations = map[string]map[string]contractField{
	"tools.list": {"cursor": {valid: cursor}, "limit": {valid: intIn(1, 1000)}},
	"tools.search": {
		"query": {required: true, valid: func(v any) bool {
			s, ok := v.(string)
			return ok && utf8.RuneCountInString(s) >= 1 && utf8.RuneCountInString(s) <= 1024
		}},
		"toolkit": {valid: func(v any) bool { return v == nil || selector(v) }},
		"limit":   {valid: intIn(1, 100)},
	},
	"tools.describe": {"toolkit": {required: true, valid: selector}, "function": {required: true, valid: selector}},
	"tools.call": {
		"call_id": {required: true, valid: func(v any) bool {
			s, ok := v.(string)
			_, err := uuid.Parse(s)
			return ok && err == nil
		}},
		"toolkit":  {required: true, valid: selector},
		"function": {required: true, valid: selector},
		"arguments": {valid: func(v any) bool {
			_, ok := v.(map[string]any)
			return ok
		}},
	},
	"context.list": {"cursor": {valid: cursor}, "limit": {valid: intIn(1, 1000)}},
	"context.read": {"name": {required: true, valid: selector}, "offset": {valid: intIn(0, 1<<30)}, "limit": {valid: intIn(1, 65536)}},
}

// contractAccepts is whether the contract admits obj as an operation.
func contractAccepts(obj map[string]any) bool {
	name, _ := obj["operation"].(string)
	fields, ok := contractOperations[name]
	if !ok {
		return false
	}
	for key, v := range obj {
		if key == "operation" {
			continue
		}
		f, ok := fields[key]
		if !ok || !f.valid(v) {
			return false
		}
	}
	for key, f := range fields {
		if _, present := obj[key]; f.required && !present {
			return false
		}
	}
	return true
}

// encode writes op back as an operation document, every field explicit and the call id in
// its canonical spelling.
func (op *operation) encode(t *testing.T) []byte {
	t.Helper()
	doc := map[string]any{"operation": op.name}
	switch op.name {
	case "tools.list", "context.list":
		doc["limit"] = op.limit
		if op.cursor != "" {
			doc["cursor"] = op.cursor
		}
	case "tools.search":
		doc["query"], doc["limit"] = op.query, op.limit
		if op.toolkit != "" {
			doc["toolkit"] = op.toolkit
		}
	case "tools.describe":
		doc["toolkit"], doc["function"] = op.toolkit, op.function
	case "tools.call":
		doc["call_id"], doc["toolkit"], doc["function"] = op.callID.String(), op.toolkit, op.function
		doc["arguments"] = json.RawMessage(op.args)
	case "context.read":
		doc["name"], doc["offset"], doc["limit"] = op.docName, op.offset, op.limit
	}
	b, err := canonjson.Marshal(doc)
	if err != nil {
		t.Fatalf("cannot encode accepted operation %+v: %v", op, err)
	}
	return b
}

// FuzzParseOperation checks the operation reader against the contract (sections 4 and 5): it
// accepts a body exactly when the body is strict JSON and an object the contract admits, its
// refusals are Invalid errors with the contract's texts and bounded length, and an accepted
// operation written back validates again to the same operation.
func FuzzParseOperation(f *testing.F) {
	id := "6f1d3a2c-5b7e-4c9a-9f0e-2d8b1a7c4e55"
	long := func(n int) string { return strings.Repeat("é", n) }
	for _, s := range []string{
		`{"operation":"tools.list"}`, `{"operation":"tools.list","cursor":null,"limit":1000}`,
		`{"operation":"tools.list","limit":1001}`, `{"operation":"tools.list","limit":0}`,
		`{"operation":"tools.list","limit":1.0}`, `{"operation":"tools.list","limit":"5"}`,
		`{"operation":"tools.list","limit":true}`, `{"operation":"tools.list","cursor":""}`,
		`{"operation":"tools.list","cursor":"` + long(1024) + `"}`, `{"operation":"tools.list","cursor":"` + long(1025) + `"}`,
		`{"operation":"tools.list","limit":99999999999999999999999}`, `{"operation":"tools.list","limit":-9223372036854775808}`,
		`{"operation":"tools.search","query":"calendar create","toolkit":null,"limit":100}`,
		`{"operation":"tools.search","query":"` + long(1024) + `"}`, `{"operation":"tools.search","query":"` + long(1025) + `"}`,
		`{"operation":"tools.search","query":""}`, `{"operation":"tools.search","limit":20}`,
		`{"operation":"tools.describe","toolkit":"` + long(128) + `","function":"f"}`,
		`{"operation":"tools.describe","toolkit":"` + long(129) + `","function":"f"}`,
		`{"operation":"tools.describe","toolkit":"t","function":"f","requester_id":"x"}`,
		`{"operation":"tools.call","call_id":"` + id + `","toolkit":"t","function":"f"}`,
		`{"operation":"tools.call","call_id":"{` + strings.ToUpper(id) + `}","toolkit":"t","function":"f","arguments":{"b":[1,2.50,{"z":null}],"a":"\u0000é"}}`,
		`{"operation":"tools.call","call_id":"urn:uuid:` + id + `","toolkit":"t","function":"f","arguments":[]}`,
		`{"operation":"tools.call","call_id":"not-a-uuid","toolkit":"t","function":"f"}`,
		`{"operation":"tools.call","call_id":"` + id + `","toolkit":"t","function":"f","arguments":{"a":1,"a":2}}`,
		`{"operation":"context.list","limit":1}`, `{"operation":"context.read","name":"tool-schema-1","offset":1073741824,"limit":65536}`,
		`{"operation":"context.read","name":"d","offset":1073741825}`, `{"operation":"context.read","name":"d","offset":-1}`,
		`{"operation":"context.read","name":"d","limit":65537}`, `{"operation":"context.read"}`,
		`{"operation":"tools.nope"}`, `{"operation":null}`, `{}`, `[]`, `"tools.list"`, "", "\xef\xbb\xbf{}",
		`{"operation":"tools.list","operation":"tools.list"}`, `{"operation":"tools.list"} {}`,
		`{"operation":"` + strings.Repeat("x", 300) + `"}`, `{"operation":"tools.list","` + strings.Repeat("k", 300) + `":1}`,
		`{"operation":"tools.call","call_id":"` + id + `","toolkit":"t","function":"f","arguments":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		op, err := parseOperation(body)
		obj, strictErr := canonjson.ParseObject(body)
		want := strictErr == nil && contractAccepts(obj)
		if err != nil {
			if !fault.Is(err, fault.InvalidArgument) {
				t.Fatalf("parseOperation(%q): error %v is not of kind Invalid", body, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, clierr.InvalidOperation) && msg != clierr.InvalidCursor {
				t.Fatalf("parseOperation(%q): error %q has neither contract text", body, msg)
			}
			if len(msg) > 512 {
				t.Fatalf("parseOperation(%q): error of %d bytes echoes the body", body, len(msg))
			}
			if want {
				t.Fatalf("parseOperation(%q) refuses an operation the contract admits: %v", body, err)
			}
			return
		}
		if !want {
			t.Fatalf("parseOperation(%q) accepts what the contract refuses: %+v", body, op)
		}
		if op.name == "tools.call" {
			if _, err := canonjson.ParseObject(op.args); err != nil {
				t.Fatalf("arguments %q of %q are not an object: %v", op.args, body, err)
			}
			if canon, _ := canonjson.Canonicalize(op.args); !bytes.Equal(canon, op.args) {
				t.Fatalf("arguments %q of %q are not canonical", op.args, body)
			}
			if a, ok := obj["arguments"]; ok && !canonjson.Equal(a, json.RawMessage(op.args)) {
				t.Fatalf("arguments %q of %q are not the ones sent", op.args, body)
			}
		}
		again, err := parseOperation(op.encode(t))
		if err != nil {
			t.Fatalf("accepted %q, but its re-encoding %q is refused: %v", body, op.encode(t), err)
		}
		if again.name != op.name || again.cursor != op.cursor || again.limit != op.limit || again.query != op.query ||
			again.toolkit != op.toolkit || again.function != op.function || again.callID != op.callID ||
			!bytes.Equal(again.args, op.args) || again.docName != op.docName || again.offset != op.offset {
			t.Fatalf("%q re-encoded reads as %+v, not %+v", body, again, op)
		}
	})
}

// FuzzParseWait checks the long-poll time of GET calls/{id}?wait=SECONDS: accepted only as a
// decimal number of seconds from 0 to 60, and then exactly that long.
func FuzzParseWait(f *testing.F) {
	for _, s := range []string{"", "0", "60", "60.0", "60.000000001", "61", "-0", "-1", "0.5", ".5", "5.",
		"1e1", "1e2", "0x10", "0x1p4", "NaN", "nan", "Inf", "+Inf", "infinity", "1_0", " 1", "1 ", "+5", "\x00", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseWait(s)
		if err != nil {
			if want := clierr.InvalidOperation + ": wait must be a number of seconds from 0 to 60"; !fault.Is(err, fault.InvalidArgument) || err.Error() != want {
				t.Fatalf("parseWait(%q): error %v, want the Invalid error %q", s, err, want)
			}
			return
		}
		if d < 0 || d > MaxWait {
			t.Fatalf("parseWait(%q) = %v, outside 0..%v", s, d, MaxWait)
		}
		if s == "" {
			if d != 0 {
				t.Fatalf("parseWait(\"\") = %v, want 0", d)
			}
			return
		}
		if strings.ContainsAny(s, "xXpPnNiI_") {
			t.Fatalf("parseWait(%q) accepts a hex, infinite, NaN or underscored number", s)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 60 {
			t.Fatalf("parseWait(%q) accepts what is not a number of seconds from 0 to 60", s)
		}
		if want := time.Duration(f * float64(time.Second)); d != want {
			t.Fatalf("parseWait(%q) = %v, want %v", s, d, want)
		}
	})
}
