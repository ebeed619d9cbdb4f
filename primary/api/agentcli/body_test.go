package agentcli_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

// chunked sends body with no Content-Length (chunked transfer encoding).
func chunked(body []byte) option {
	return func(r *http.Request) {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body)))
		r.ContentLength = -1
	}
}

// padTo pads a JSON document with trailing spaces (insignificant whitespace) to n bytes.
func padTo(doc string, n int) []byte {
	return append([]byte(doc), bytes.Repeat([]byte(" "), n-len(doc))...)
}

// Section 4: a body of 65536 bytes is read, one byte more is 413, and only after authority.
func TestBodyLimitIs64KiB(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	tooLarge := `{"detail":"Agent CLI request exceeds 64 KiB"}`

	t.Run("ListPaddedToExactly65536BytesIsServed", func(t *testing.T) {
		s.ok(s.do(http.MethodPost, operationsPath, padTo(`{"operation":"tools.list"}`, maxBody)))
	})
	t.Run("CallWhoseArgumentsFillExactly65536BytesIsAdmitted", func(t *testing.T) {
		id := uuid.NewString()
		head := callOp(id, "test", "echo", `{"s":""}`)
		fill := strings.Repeat("y", maxBody-len(head))
		body := callOp(id, "test", "echo", `{"s":"`+fill+`"}`)
		if len(body) != maxBody {
			t.Fatalf("built %d bytes", len(body))
		}
		rc := decodeReceipt(t, s.do(http.MethodPost, operationsPath, []byte(body)))
		if done := s.await(rc.CallID); done.Status != "completed" {
			t.Fatalf("receipt %s", done.raw)
		}
	})
	for _, n := range []int{maxBody + 1, 70000, 10 << 20} {
		t.Run(fmt.Sprintf("%dBytesAre413", n), func(t *testing.T) {
			r := s.do(http.MethodPost, operationsPath, padTo(`{"operation":"tools.list"}`, n))
			if r.code != http.StatusRequestEntityTooLarge || string(r.body) != tooLarge {
				t.Fatalf("got %s", r)
			}
		})
	}
	t.Run("ChunkedBodyOfExactly65536BytesIsServed", func(t *testing.T) {
		s.ok(s.do(http.MethodPost, operationsPath, nil, chunked(padTo(`{"operation":"tools.list"}`, maxBody))))
	})
	t.Run("ChunkedBodyOf65537BytesIs413", func(t *testing.T) {
		r := s.do(http.MethodPost, operationsPath, nil, chunked(padTo(`{"operation":"tools.list"}`, maxBody+1)))
		if r.code != http.StatusRequestEntityTooLarge || string(r.body) != tooLarge {
			t.Fatalf("got %s", r)
		}
	})
	t.Run("70000BytesWithoutAuthorityAre401", func(t *testing.T) {
		requireUnauthorized(t, s.do(http.MethodPost, operationsPath, padTo(`{"operation":"tools.list"}`, 70000), authorization("Bearer "+randomToken())))
	})
}

// deep nests depth-1 arrays inside an arguments object, so the whole document has the given
// nesting depth (the operation object is depth 1, arguments depth 2).
func deep(depth int) string {
	n := depth - 2
	return callOp(uuid.NewString(), "test", "echo", `{"a":`+strings.Repeat("[", n)+strings.Repeat("]", n)+`}`)
}

// Section 4: strict JSON, exact operation shapes, no coercion. Every refusal is 422 with the
// generic detail; every acceptance is canonical 200.
func TestOperationDocumentsAreReadStrictly(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env, func(r *responsev1.OpenResponseRequest) {
		r.ContextDocuments = []*responsev1.ContextDocument{{Name: "notes", Text: "some notes"}}
	})
	call := func(args string) string { return callOp(uuid.NewString(), "test", "echo", args) }
	list := func(fields string) string { return `{"operation":"tools.list"` + fields + `}` }
	search := func(fields string) string { return `{"operation":"tools.search","query":"echo"` + fields + `}` }
	read := func(fields string) string { return `{"operation":"context.read","name":"notes"` + fields + `}` }
	s128, s129 := strings.Repeat("s", 128), strings.Repeat("s", 129)

	refused := []struct{ name, body string }{
		{"EmptyBodyIsRefused", ``},
		{"WhitespaceOnlyIsRefused", "  \n "},
		{"TruncatedObjectIsRefused", `{"operation":"tools.list"`},
		{"DuplicateKeyAtTopLevelIsRefused", `{"operation":"tools.list","limit":1,"limit":2}`},
		{"DuplicateOperationKeyIsRefused", `{"operation":"tools.list","operation":"tools.list"}`},
		{"DuplicateKeyDeepInsideArgumentsIsRefused", call(`{"a":{"b":[{"c":1,"c":1}]}}`)},
		{"DuplicateKeyWrittenWithAnEscapeIsRefused", call(`{"a":1,"\u0061":1}`)},
		{"NaNIsRefused", call(`{"x":NaN}`)},
		{"InfinityIsRefused", call(`{"x":Infinity}`)},
		{"NegativeInfinityIsRefused", call(`{"x":-Infinity}`)},
		{"NumberOverflowingFloat64IsRefused", call(`{"x":1e999}`)},
		{"OverflowingLimitIsRefused", list(`,"limit":1e999`)},
		{"NestingDeeperThan64IsRefused", deep(65)},
		{"ByteOrderMarkIsRefused", "\xef\xbb\xbf" + list(``)},
		{"UTF16IsRefused", "\xff\xfe{\x00}\x00"},
		{"LoneSurrogateEscapeIsRefused", call(`{"x":"\ud800"}`)},
		{"InvalidUTF8IsRefused", call("{\"x\":\"\xff\"}")},
		{"TrailingDataIsRefused", list(``) + `x`},
		{"SecondValueIsRefused", list(``) + ` {}`},
		{"ArrayIsRefused", `[{"operation":"tools.list"}]`},
		{"StringIsRefused", `"tools.list"`},
		{"NumberIsRefused", `1`},
		{"NullIsRefused", `null`},
		{"SingleQuotesAreRefused", `{'operation':'tools.list'}`},
		{"CommentIsRefused", `{"operation":"tools.list"/* */}`},
		{"TrailingCommaIsRefused", `{"operation":"tools.list",}`},
		{"MissingOperationIsRefused", `{"limit":1}`},
		{"NumericOperationIsRefused", `{"operation":1}`},
		{"UnknownOperationIsRefused", `{"operation":"tools.delete"}`},
		{"OperationInOtherCaseIsRefused", `{"operation":"Tools.List"}`},
		{"UnknownKeyIsRefused", list(`,"verbose":true`)},
		{"KeyOfAnotherOperationIsRefused", list(`,"query":"x"`)},
		// wrong JSON types: no string-to-number, no bool-as-int, no float-as-int
		{"StringLimitIsRefused", list(`,"limit":"5"`)},
		{"BooleanLimitIsRefused", list(`,"limit":true`)},
		{"FractionLimitIsRefused", list(`,"limit":5.0`)},
		{"ExponentLimitIsRefused", list(`,"limit":1e2`)},
		{"NullLimitIsRefused", list(`,"limit":null`)},
		{"HugeLimitIsRefused", list(`,"limit":99999999999999999999`)},
		{"NumericCursorIsRefused", list(`,"cursor":5`)},
		{"BooleanCursorIsRefused", list(`,"cursor":false`)},
		{"ArgumentsArrayIsRefused", call(`[]`)},
		{"ArgumentsStringIsRefused", call(`"x"`)},
		{"ArgumentsNullIsRefused", call(`null`)},
		{"ArgumentsNumberIsRefused", call(`1`)},
		{"NumericCallIDIsRefused", `{"operation":"tools.call","call_id":5,"toolkit":"test","function":"echo"}`},
		{"NonUUIDCallIDIsRefused", callOp("call-1", "test", "echo", `{}`)},
		{"UUIDWithTrailingCharacterIsRefused", callOp(uuid.NewString()+"0", "test", "echo", `{}`)},
		{"NumericToolkitIsRefused", `{"operation":"tools.describe","toolkit":1,"function":"echo"}`},
		{"NullToolkitOfDescribeIsRefused", `{"operation":"tools.describe","toolkit":null,"function":"echo"}`},
		{"NumericQueryIsRefused", `{"operation":"tools.search","query":5}`},
		{"StringOffsetIsRefused", read(`,"offset":"0"`)},
		// required fields
		{"SearchWithoutQueryIsRefused", `{"operation":"tools.search"}`},
		{"DescribeWithoutFunctionIsRefused", `{"operation":"tools.describe","toolkit":"test"}`},
		{"CallWithoutCallIDIsRefused", `{"operation":"tools.call","toolkit":"test","function":"echo"}`},
		{"CallWithoutToolkitIsRefused", `{"operation":"tools.call","call_id":"` + uuid.NewString() + `","function":"echo"}`},
		{"ReadWithoutNameIsRefused", `{"operation":"context.read"}`},
		// bounds
		{"ListLimit0IsRefused", list(`,"limit":0`)},
		{"ListLimitMinus1IsRefused", list(`,"limit":-1`)},
		{"ListLimit1001IsRefused", list(`,"limit":1001`)},
		{"SearchLimit0IsRefused", search(`,"limit":0`)},
		{"SearchLimit101IsRefused", search(`,"limit":101`)},
		{"EmptyQueryIsRefused", `{"operation":"tools.search","query":""}`},
		{"Query1025CharactersIsRefused", `{"operation":"tools.search","query":"` + strings.Repeat("q", 1025) + `"}`},
		{"EmptyToolkitFilterIsRefused", search(`,"toolkit":""`)},
		{"ToolkitFilter129CharactersIsRefused", search(`,"toolkit":"` + s129 + `"`)},
		{"DescribeToolkit129CharactersIsRefused", describeOp(s129, "echo")},
		{"DescribeFunction129CharactersIsRefused", describeOp("test", s129)},
		{"DescribeEmptyFunctionIsRefused", describeOp("test", "")},
		{"CallToolkit129CharactersIsRefused", callOp(uuid.NewString(), s129, "echo", `{}`)},
		{"CallFunction129CharactersIsRefused", callOp(uuid.NewString(), "test", s129, `{}`)},
		{"Cursor1025CharactersIsRefused", list(`,"cursor":"` + strings.Repeat("c", 1025) + `"`)},
		{"ContextCursor1025CharactersIsRefused", `{"operation":"context.list","cursor":"` + strings.Repeat("c", 1025) + `"}`},
		{"ContextListLimit0IsRefused", `{"operation":"context.list","limit":0}`},
		{"ContextListLimit1001IsRefused", `{"operation":"context.list","limit":1001}`},
		{"ReadLimit0IsRefused", read(`,"limit":0`)},
		{"ReadLimit65537IsRefused", read(`,"limit":65537`)},
		{"ReadOffsetMinus1IsRefused", read(`,"offset":-1`)},
		{"ReadName129CharactersIsRefused", `{"operation":"context.read","name":"` + s129 + `"}`},
	}
	for _, field := range []string{"requester_id", "agent_name", "worker_id", "turn_id", "generation", "room_id"} {
		for _, op := range []struct{ name, body string }{
			{"List", list(`,"` + field + `":"x"`)},
			{"Search", search(`,"` + field + `":"x"`)},
			{"Describe", `{"operation":"tools.describe","toolkit":"test","function":"echo","` + field + `":"x"}`},
			{"Call", callOp(uuid.NewString(), "test", "echo", `{},"`+field+`":"x"`)},
			{"ContextList", `{"operation":"context.list","` + field + `":1}`},
			{"ContextRead", read(`,"` + field + `":null`)},
		} {
			refused = append(refused, struct{ name, body string }{op.name + "Refuses_" + field, op.body})
		}
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			requireStatus(t, s.do(http.MethodPost, operationsPath, []byte(tc.body)), http.StatusUnprocessableEntity, invalidOperation)
		})
	}

	accepted := []struct{ name, body string }{
		{"NestingOfExactly64IsAccepted", deep(64)},
		{"WhitespaceAroundTheObjectIsAccepted", " \r\n\t" + list(``) + "\n "},
		{"NullCursorIsAccepted", list(`,"cursor":null`)},
		{"ListLimit1IsAccepted", list(`,"limit":1`)},
		{"ListLimit1000IsAccepted", list(`,"limit":1000`)},
		{"SearchLimit1IsAccepted", search(`,"limit":1`)},
		{"SearchLimit100IsAccepted", search(`,"limit":100`)},
		{"Query1024CharactersIsAccepted", `{"operation":"tools.search","query":"` + strings.Repeat("q", 1024) + `"}`},
		{"Query1024MultiByteCharactersIsAccepted", `{"operation":"tools.search","query":"` + strings.Repeat("é", 1024) + `"}`},
		{"NullToolkitFilterIsAccepted", search(`,"toolkit":null`)},
		{"ToolkitFilter128CharactersIsAccepted", search(`,"toolkit":"` + s128 + `"`)},
		{"CallToolkit128CharactersIsAdmitted", callOp(uuid.NewString(), s128, "echo", `{}`)},
		{"CallFunction128CharactersIsAdmitted", callOp(uuid.NewString(), "test", s128, `{}`)},
		{"CallWithoutArgumentsIsAdmitted", callOp(uuid.NewString(), "test", "echo", ``)},
		{"LookAlikeIdentityKeysInsideArgumentsAreData", call(`{"requester_id":"x","agent_name":"y","worker_id":"z","turn_id":1,"generation":2,"room_id":"!r","operation":"tools.list"}`)},
		{"ContextListLimit1000IsAccepted", `{"operation":"context.list","limit":1000}`},
		{"ReadLimit1IsAccepted", read(`,"limit":1`)},
		{"ReadLimit65536IsAccepted", read(`,"limit":65536`)},
		{"ReadOffset0IsAccepted", read(`,"offset":0`)},
		{"EscapedKeysAreTheSameKeys", `{"operation":"tools.list","\u006cimit":1}`},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			s.ok(s.do(http.MethodPost, operationsPath, []byte(tc.body)))
		})
	}

	// Bounds whose inside is another, more specific, refusal.
	specific := []struct{ name, body, detail string }{
		{"Cursor1024CharactersIsReadAndIsNotACursor", list(`,"cursor":"` + strings.Repeat("c", 1024) + `"`), "Invalid discovery cursor"},
		{"ContextCursor1024CharactersIsReadAndIsNotACursor", `{"operation":"context.list","cursor":"` + strings.Repeat("c", 1024) + `"}`, "Invalid discovery cursor"},
		{"EmptyCursorIsNotACursor", list(`,"cursor":""`), "Invalid discovery cursor"},
		{"DescribeToolkit128CharactersIsLookedUp", describeOp(s128, "echo"), "Unknown toolkit"},
		{"ReadName128CharactersIsLookedUp", `{"operation":"context.read","name":"` + s128 + `"}`, "Context document is unavailable"},
	}
	for _, tc := range specific {
		t.Run(tc.name, func(t *testing.T) {
			requireStatus(t, s.do(http.MethodPost, operationsPath, []byte(tc.body)), http.StatusUnprocessableEntity, tc.detail)
		})
	}

	t.Run("LookAlikeKeysReachTheToolAsData", func(t *testing.T) {
		rc := s.call("test", "echo", `{"requester_id":"mallory","room_id":"!evil"}`)
		done := s.await(rc.CallID)
		if done.Status != "completed" || string(done.Outcome) != `{"requester_id":"mallory","room_id":"!evil"}` {
			t.Fatalf("receipt %s", done.raw)
		}
	})
}

// Section 5: a call id may be spelt any way a UUID can; the receipt carries the canonical form,
// and every spelling names the same call.
func TestCallIDIsAnyUUIDSpelling(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	spellings := []struct {
		name  string
		spell func(uuid.UUID) string
	}{
		{"CanonicalIsAccepted", func(u uuid.UUID) string { return u.String() }},
		{"UpperCaseIsAccepted", func(u uuid.UUID) string { return strings.ToUpper(u.String()) }},
		{"WithoutHyphensIsAccepted", func(u uuid.UUID) string { return strings.ReplaceAll(u.String(), "-", "") }},
		{"InBracesIsAccepted", func(u uuid.UUID) string { return "{" + u.String() + "}" }},
		{"URNIsAccepted", func(u uuid.UUID) string { return "urn:uuid:" + u.String() }},
		{"UpperCaseURNIsAccepted", func(u uuid.UUID) string { return "URN:UUID:" + strings.ToUpper(u.String()) }},
	}
	for _, sp := range spellings {
		t.Run(sp.name, func(t *testing.T) {
			u := uuid.New()
			rc := decodeReceipt(t, s.post(callOp(sp.spell(u), "test", "echo", `{"n":1}`)))
			if rc.CallID != u.String() {
				t.Fatalf("call_id %q, want %q", rc.CallID, u.String())
			}
			for _, other := range spellings {
				again := decodeReceipt(t, s.post(callOp(other.spell(u), "test", "echo", `{"n":1}`)))
				if again.CallID != u.String() {
					t.Fatalf("replay spelt %s: call_id %q", other.name, again.CallID)
				}
				if other.name == "URNIsAccepted" || other.name == "UpperCaseURNIsAccepted" || other.name == "InBracesIsAccepted" {
					continue // not path-safe spellings for GET in every client; checked below
				}
				if got := decodeReceipt(t, s.get(other.spell(u), "")); got.CallID != u.String() {
					t.Fatalf("GET spelt %s: call_id %q", other.name, got.CallID)
				}
			}
		})
	}
	t.Run("GetAcceptsBracedAndURNSpellings", func(t *testing.T) {
		u := uuid.New()
		decodeReceipt(t, s.post(callOp(u.String(), "test", "echo", `{}`)))
		for _, id := range []string{"%7B" + u.String() + "%7D", "urn:uuid:" + u.String()} {
			if got := decodeReceipt(t, s.get(id, "")); got.CallID != u.String() {
				t.Fatalf("GET %s: call_id %q", id, got.CallID)
			}
		}
	})
}
