package agentcli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary/catalog"
)

const maxOutcome = 16 * 1024

// Sections 5 and 6: a new call's receipt is queued, carries exactly the seven keys and names its
// window's Bash call.
func TestNewCallReceiptIsQueuedWithSevenKeys(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	id := uuid.NewString()
	rc := decodeReceipt(t, s.post(callOp(id, "test", "gate", gateArgs("queued"))))
	want := `{"attachments":[],"call_id":"` + id + `","function":"gate","outcome":null,"parent_bash_call_id":"b1","status":"queued","toolkit":"test"}`
	if string(rc.raw) != want {
		t.Fatalf("receipt %s\nwant %s", rc.raw, want)
	}
	<-env.Primary.Internals().TestToolkit.Started("queued")
	if got := decodeReceipt(t, s.get(id, "")); got.Status != "running" || string(got.Outcome) != "null" {
		t.Fatalf("a started gate call: %s", got.raw)
	}
	env.Primary.Internals().TestToolkit.Release("queued")
	if done := s.await(id); done.Status != "completed" || string(done.Outcome) != `{"released":"queued"}` {
		t.Fatalf("receipt %s", done.raw)
	}
}

// Sections 6 and 8: outcomes of every kind, within 16 KiB, in canonical JSON.
func TestReceiptOutcomes(t *testing.T) {
	t.Parallel()
	broken := &fakeToolkit{
		name: "broken", description: "Returns what JSON cannot carry.",
		functions: []catalog.Function{{Name: "error", Description: "Fails with bytes that are not UTF-8."}, {Name: "value", Description: "Returns them."}},
		call: func(_ context.Context, c catalog.Call) (catalog.Result, error) {
			if c.Function == "error" {
				return catalog.Result{}, errors.New("bad \xff byte")
			}
			return catalog.Result{Value: map[string]any{"s": "bad \xff byte"}}, nil
		},
	}
	env := startEnv(t, broken)
	s := open(t, env)
	controls := strings.Repeat(`\u0001`, 4096) // 4096 characters whose JSON is 24578 bytes

	cases := []struct {
		name, toolkit, function, args string
		status                        string
		check                         func(t *testing.T, rc receipt)
	}{
		{"EchoReturnsCanonicalArguments", "test", "echo", "{ \"b\" : 2 , \"a\":\"é<>&\\u00e9\", \"f\":1.0, \"i\":1, \"e\":1E2, \"n\":null, \"l\":[true,false] }", "completed",
			outcomeIs(`{"a":"é<>&é","b":2,"e":100.0,"f":1.0,"i":1,"l":[true,false],"n":null}`)},
		{"NumbersAndTextAreWrittenAsMindRoomsPythonWritesThem", "test", "echo",
			`{"a":-0,"b":1E-7,"c":1e2,"d":123456789012345678901234567890,"e":-0.0,"f":1.5e300,"g":0.1,"h":100000000000000000.0,"i":1e16,"j":"\u2028<>&\u007f"}`, "completed",
			outcomeIs("{\"a\":0,\"b\":1e-07,\"c\":100.0,\"d\":123456789012345678901234567890,\"e\":-0.0,\"f\":1.5e+300,\"g\":0.1,\"h\":1e+17,\"i\":1e+16,\"j\":\"\u2028<>&\u007f\"}")},
		{"EmptyArgumentsEchoAsEmptyObject", "test", "echo", ``, "completed", outcomeIs(`{}`)},
		{"FailingToolFailsWithItsMessage", "test", "fail", `{"message":"boom <&>"}`, "failed", outcomeIs(`"boom <&>"`)},
		{"FailingToolWithoutMessageFailsWithTheDefault", "test", "fail", `{}`, "failed", outcomeIs(`"test failure"`)},
		{"SchemaViolationFailsAsInvalidToolArguments", "test", "sleep", `{"seconds":"soon"}`, "failed", outcomePrefix("Invalid tool arguments")},
		{"MissingRequiredArgumentFailsAsInvalidToolArguments", "test", "large", `{}`, "failed", outcomePrefix("Invalid tool arguments")},
		{"ExtraArgumentFailsAsInvalidToolArguments", "test", "media", `{"x":1}`, "failed", outcomePrefix("Invalid tool arguments")},
		{"UnknownToolkitFailsNamingTheToolkits", "nope", "echo", `{}`, "failed", outcomeContains("nope", "test", "test_deferred", "shell")},
		{"UnknownFunctionFailsNamingTheFunctions", "test", "nope", `{}`, "failed", outcomeContains("nope", "echo", "identity")},
		{"MediaCarriesAnImageAttachment", "test", "media", `{}`, "completed", func(t *testing.T, rc receipt) {
			outcomeIs(`{"ok":true}`)(t, rc)
			if len(rc.Attachments) != 1 {
				t.Fatalf("attachments %v", rc.Attachments)
			}
			a := rc.Attachments[0]
			if a["kind"] != "image" || a["mime_type"] != "image/png" || !strings.HasPrefix(fmt.Sprint(a["uri"]), "data:image/png;base64,") {
				t.Fatalf("attachment %v", a)
			}
		}},
		{"OutcomeOfExactly16KiBIsKept", "test", "large", fmt.Sprintf(`{"bytes":%d}`, maxOutcome-2), "completed", func(t *testing.T, rc receipt) {
			if len(rc.Outcome) != maxOutcome || rc.outcomeText(t) != strings.Repeat("x", maxOutcome-2) {
				t.Fatalf("outcome of %d bytes was changed", len(rc.Outcome))
			}
		}},
		{"OutcomeOneByteOver16KiBIsShortenedVisibly", "test", "large", fmt.Sprintf(`{"bytes":%d}`, maxOutcome-1), "completed", shortened},
		{"OutcomeOf20000BytesIsShortenedVisibly", "test", "large", `{"bytes":20000}`, "completed", shortened},
		{"OutcomeOfAMegabyteIsShortenedVisibly", "test", "large", `{"bytes":1048576}`, "completed", shortened},
		{"FailureMessageThatIsNotUTF8IsStillAString", "broken", "error", `{}`, "failed", outcomeIs("\"bad \uFFFD byte\"")},
		{"ResultThatIsNotJSONFailsWithAString", "broken", "value", `{}`, "completed", outcomeContains("not JSON")},
		{"FailureMessageWhoseJSONExceeds16KiBIsShortenedVisibly", "test", "fail", `{"message":"` + controls + `"}`, "failed", shortened},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := decodeReceipt(t, s.post(callOp(uuid.NewString(), tc.toolkit, tc.function, tc.args)))
			done := s.await(rc.CallID)
			if done.Status != tc.status {
				t.Fatalf("status %q, want %q: %.300s", done.Status, tc.status, done.raw)
			}
			if done.Toolkit != tc.toolkit || done.Function != tc.function || done.Parent != "b1" || done.CallID != rc.CallID {
				t.Fatalf("receipt names %s.%s in %s: %.300s", done.Toolkit, done.Function, done.Parent, done.raw)
			}
			if len(done.Outcome) > maxOutcome {
				t.Fatalf("outcome of %d bytes", len(done.Outcome))
			}
			tc.check(t, done)
		})
	}
}

func outcomeIs(want string) func(*testing.T, receipt) {
	return func(t *testing.T, rc receipt) {
		t.Helper()
		if string(rc.Outcome) != want {
			t.Fatalf("outcome %s, want %s", rc.Outcome, want)
		}
	}
}

func outcomePrefix(prefix string) func(*testing.T, receipt) {
	return func(t *testing.T, rc receipt) {
		t.Helper()
		if got := rc.outcomeText(t); !strings.HasPrefix(got, prefix) {
			t.Fatalf("outcome %q, want it to start with %q", got, prefix)
		}
	}
}

func outcomeContains(parts ...string) func(*testing.T, receipt) {
	return func(t *testing.T, rc receipt) {
		t.Helper()
		got := rc.outcomeText(t)
		for _, p := range parts {
			if !strings.Contains(got, p) {
				t.Fatalf("outcome %q does not name %q", got, p)
			}
		}
	}
}

func shortened(t *testing.T, rc receipt) {
	t.Helper()
	got := rc.outcomeText(t)
	if !strings.Contains(got, "shortened") || len(rc.Outcome) > maxOutcome || len(rc.Outcome) < maxOutcome/2 {
		t.Fatalf("outcome of %d bytes is not a visibly shortened text near 16 KiB: %.80q…%q", len(rc.Outcome), got, got[max(0, len(got)-80):])
	}
}

// Section 6: identity comes from the response, never from arguments.
func TestCallRunsUnderTheResponsesIdentity(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	rc := s.call("test", "identity", `{}`, inWindow(s.openWindow("bash-7")))
	done := s.await(rc.CallID)
	want := fmt.Sprintf(`{"agent":"tester","bash_call_id":"bash-7","channel":"!room:example.org","requester":"@alice:example.org","response_id":%q,"thread":"$thread"}`, s.id)
	if done.Status != "completed" || string(done.Outcome) != want {
		t.Fatalf("identity %s\nwant %s", done.Outcome, want)
	}
	t.Run("IdentityArgumentsAreRefusedByTheToolsSchema", func(t *testing.T) {
		rc := s.call("test", "identity", `{"requester_id":"@mallory:example.org"}`)
		if done := s.await(rc.CallID); done.Status != "failed" || !strings.HasPrefix(done.outcomeText(t), "Invalid tool arguments") {
			t.Fatalf("receipt %s", done.raw)
		}
	})
}

// Section 8: a replay with the same call id and the same operation (in any key order and
// spacing) returns the receipt and runs nothing; any difference is 409; the check comes before
// any window check.
func TestReplayReturnsTheSameReceiptAndRunsOnce(t *testing.T) {
	t.Parallel()
	c := newCounter()
	env := startEnv(t, c)
	s := open(t, env)
	id := uuid.NewString()
	first := decodeReceipt(t, s.post(callOp(id, "counter", "hold", `{"a":1,"b":[1,2],"c":{"x":"é"}}`)))
	<-c.started

	same := []struct{ name, body string }{
		{"SameDocumentIsAReplay", callOp(id, "counter", "hold", `{"a":1,"b":[1,2],"c":{"x":"é"}}`)},
		{"OtherKeyOrderIsAReplay", `{"arguments":{"c":{"x":"é"},"b":[1,2],"a":1},"function":"hold","toolkit":"counter","call_id":"` + id + `","operation":"tools.call"}`},
		{"OtherWhitespaceIsAReplay", "{\n \"operation\" : \"tools.call\" ,\"call_id\":\"" + id + "\",\"toolkit\":\"counter\",\"function\":\"hold\",\"arguments\":{ \"a\" : 1 , \"b\" : [ 1 , 2 ] , \"c\" : { \"x\" : \"\\u00e9\" } }\n}"},
		{"UpperCaseCallIDIsAReplay", callOp(strings.ToUpper(id), "counter", "hold", `{"a":1,"b":[1,2],"c":{"x":"é"}}`)},
	}
	for _, tc := range same {
		t.Run(tc.name, func(t *testing.T) {
			rc := decodeReceipt(t, s.post(tc.body))
			if rc.CallID != id || rc.Parent != "b1" || rc.Status != "running" {
				t.Fatalf("replay %s (first was %s)", rc.raw, first.raw)
			}
		})
	}
	t.Run("ReplayWithoutWindowHeaderIsAReplay", func(t *testing.T) {
		decodeReceipt(t, s.post(same[0].body, withoutWindow()))
	})
	t.Run("ReplayInAnotherWindowIsAReplayAndKeepsItsParent", func(t *testing.T) {
		if rc := decodeReceipt(t, s.post(same[0].body, inWindow(s.openWindow("b2")))); rc.Parent != "b1" {
			t.Fatalf("parent %q", rc.Parent)
		}
	})
	t.Run("ReplayNamingAnUnknownWindowIsAReplay", func(t *testing.T) {
		decodeReceipt(t, s.post(same[0].body, inWindow("no-such-window")))
	})

	conflicts := []struct{ name, body string }{
		{"OtherArgumentsConflict", callOp(id, "counter", "hold", `{"a":2,"b":[1,2],"c":{"x":"é"}}`)},
		{"ArgumentOrderInsideAnArrayConflicts", callOp(id, "counter", "hold", `{"a":1,"b":[2,1],"c":{"x":"é"}}`)},
		{"IntegerVersusFloatConflicts", callOp(id, "counter", "hold", `{"a":1.0,"b":[1,2],"c":{"x":"é"}}`)},
		{"MissingArgumentsConflict", callOp(id, "counter", "hold", ``)},
		{"OtherFunctionConflicts", callOp(id, "test", "hold", `{"a":1,"b":[1,2],"c":{"x":"é"}}`)},
		{"OtherToolkitConflicts", callOp(id, "counter", "echo", `{"a":1,"b":[1,2],"c":{"x":"é"}}`)},
	}
	for _, tc := range conflicts {
		t.Run(tc.name, func(t *testing.T) {
			requireStatus(t, s.post(tc.body), http.StatusConflict, "Call ID already belongs to a different operation")
		})
		t.Run(tc.name+"EvenWithoutAWindow", func(t *testing.T) {
			requireStatus(t, s.post(tc.body, withoutWindow()), http.StatusConflict, "Call ID already belongs to a different operation")
		})
	}

	close(c.release)
	done := s.await(id)
	s.closeWindow("b1")
	t.Run("ReplayAfterTheWindowClosedReturnsTheFinalReceipt", func(t *testing.T) {
		rc := decodeReceipt(t, s.post(same[1].body))
		if string(rc.raw) != string(done.raw) || rc.Status != "completed" {
			t.Fatalf("replay %s, want %s", rc.raw, done.raw)
		}
		rc = decodeReceipt(t, s.post(same[1].body, withoutWindow()))
		if string(rc.raw) != string(done.raw) {
			t.Fatalf("replay %s, want %s", rc.raw, done.raw)
		}
		requireStatus(t, s.post(conflicts[0].body), http.StatusConflict, "Call ID already belongs to a different operation")
	})
	t.Run("TheToolRanOnce", func(t *testing.T) {
		if n := c.runsOf(id); n != 1 {
			t.Fatalf("ran %d times", n)
		}
	})
}

// Section 8: a lost HTTP reply never cancels accepted work, and a retry shows its progress.
func TestLostReplyDoesNotCancelTheCall(t *testing.T) { // not parallel: waitBlocked
	c := newCounter()
	env := startEnv(t, c)
	s := open(t, env)
	id := uuid.NewString()
	op := callOp(id, "counter", "hold", `{"k":"v"}`)

	// Send the call on a raw connection and hang up once the tool runs, never reading the reply.
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.AgentCLIURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: agent-cli\r\nAuthorization: Bearer %s\r\n%s: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", operationsPath, s.grant, windowHeader, s.windows["b1"], len(op), op)
	if started := <-c.started; started != id {
		t.Fatalf("started %s", started)
	}
	conn.Close()

	t.Run("RetryShowsTheRunningCall", func(t *testing.T) {
		if rc := decodeReceipt(t, s.post(op)); rc.Status != "running" {
			t.Fatalf("retry %s", rc.raw)
		}
	})
	t.Run("AnAbandonedLongPollDoesNotCancelEither", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := s.send(http.MethodGet, callsPath+id+"?wait=60", nil, withContext(ctx))
			errc <- err
		}()
		waitBlocked(t, "(*Response).GetCall(")
		cancel()
		if err := <-errc; err == nil {
			t.Fatal("the cancelled long poll returned a reply")
		}
		if rc := decodeReceipt(t, s.get(id, "")); rc.Status != "running" {
			t.Fatalf("after the abandoned poll: %s", rc.raw)
		}
	})
	close(c.release)
	t.Run("TheCallCompletesHavingRunOnce", func(t *testing.T) {
		if done := s.await(id); done.Status != "completed" || string(done.Outcome) != `{"held":true}` {
			t.Fatalf("receipt %s", done.raw)
		}
		decodeReceipt(t, s.post(op))
		if n := c.runsOf(id); n != 1 {
			t.Fatalf("ran %d times", n)
		}
	})
}

// Section 2 (our extension): GET ?wait=SECONDS long-polls until the receipt is terminal.
func TestLongPollReturnsWhenTheCallEnds(t *testing.T) { // not parallel: waitBlocked
	env := startEnv(t)
	s := open(t, env)
	tk := env.Primary.Internals().TestToolkit

	t.Run("WaitReturnsOnceTheGateIsReleased", func(t *testing.T) {
		rc := s.call("test", "gate", gateArgs("poll"))
		<-tk.Started("poll")
		got := make(chan reply, 1)
		errc := make(chan error, 1)
		go func() {
			r, err := s.send(http.MethodGet, callsPath+rc.CallID+"?wait=60", nil)
			errc <- err
			got <- r
		}()
		waitBlocked(t, "(*Response).GetCall(")
		select {
		case r := <-got:
			t.Fatalf("the long poll returned before the gate opened: %s", r)
		default:
		}
		tk.Release("poll")
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if done := decodeReceipt(t, <-got); done.Status != "completed" {
			t.Fatalf("long poll returned %s", done.raw)
		}
	})
	t.Run("WaitOnATerminalReceiptReturnsAtOnce", func(t *testing.T) {
		rc := s.call("test", "echo", `{}`)
		s.await(rc.CallID)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a guard: the wait asked for is 60 s
		defer cancel()
		r, err := s.send(http.MethodGet, callsPath+rc.CallID+"?wait=60", nil, withContext(ctx))
		if err != nil {
			t.Fatalf("a long poll on a completed call did not return at once: %v", err)
		}
		if done := decodeReceipt(t, r); done.Status != "completed" {
			t.Fatalf("receipt %s", done.raw)
		}
	})
	t.Run("WaitOfZeroReturnsTheLiveReceipt", func(t *testing.T) {
		rc := s.call("test", "gate", gateArgs("zero"))
		<-tk.Started("zero")
		if got := decodeReceipt(t, s.get(rc.CallID, "?wait=0")); got.Status != "running" {
			t.Fatalf("receipt %s", got.raw)
		}
		tk.Release("zero")
		s.await(rc.CallID)
	})

	done := s.call("test", "echo", `{}`)
	s.await(done.CallID)
	for _, w := range []string{"0", "0.0", "0.25", "1", "59.999", "60", "60.0", "060"} {
		t.Run("Wait"+w+"IsAccepted", func(t *testing.T) {
			decodeReceipt(t, s.get(done.CallID, "?wait="+w))
		})
	}
	for _, w := range []string{"60.5", "60.000001", "61", "-1", "-0.5", "abc", "NaN", "Inf", "infinity", "0x10", "1_0", "1e400", "%20", "1,5", "5s"} {
		t.Run("Wait"+w+"IsRefused", func(t *testing.T) {
			requireStatus(t, s.get(done.CallID, "?wait="+w), http.StatusUnprocessableEntity, "wait")
		})
	}
	t.Run("TwoWaitsAreRefused", func(t *testing.T) {
		requireStatus(t, s.get(done.CallID, "?wait=1&wait=2"), http.StatusUnprocessableEntity, "")
	})
	t.Run("ClosingTheResponseEndsALongPollWithTheUniform401", func(t *testing.T) {
		other := open(t, env)
		rc := other.call("test", "gate", gateArgs("never"))
		<-tk.Started("never")
		got := make(chan reply, 1)
		go func() {
			r, _ := other.send(http.MethodGet, callsPath+rc.CallID+"?wait=60", nil)
			got <- r
		}()
		waitBlocked(t, "(*Response).GetCall(")
		other.closeResponse()
		requireUnauthorized(t, <-got)
	})
}

// Section 6: a receipt admitted in one window carries that window's Bash call id even when read
// through another window or none.
func TestReceiptIsReadableWithoutItsWindow(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	rc := s.call("test", "echo", `{"w":1}`)
	s.await(rc.CallID)
	receipts := s.closeWindow("b1")
	if len(receipts) != 1 || receipts[0].GetCallId() != rc.CallID || receipts[0].GetOutcomeJson() != `{"w":1}` ||
		receipts[0].GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
		t.Fatalf("window receipts %v", receipts)
	}
	for _, opt := range []option{withoutWindow(), inWindow(s.openWindow("b2")), inWindow("unknown")} {
		if got := decodeReceipt(t, s.get(rc.CallID, "", opt)); got.Parent != "b1" || got.Status != "completed" {
			t.Fatalf("receipt %s", got.raw)
		}
	}
	var v map[string]any
	_ = json.Unmarshal(rc.raw, &v)
}

// Section 6: a running call may report waiting and running again; the receipt follows it.
func TestReceiptFollowsWaitingAndRunning(t *testing.T) {
	t.Parallel()
	steps := make(chan string)
	next := make(chan struct{})
	tk := &fakeToolkit{name: "progress", description: "Reports progress.",
		functions: []catalog.Function{{Name: "step", Description: "Waits, runs, then returns."}},
		call: func(ctx context.Context, c catalog.Call) (catalog.Result, error) {
			for _, s := range []string{"waiting", "running"} {
				if s == "waiting" {
					c.Progress.Waiting()
				} else {
					c.Progress.Running()
				}
				steps <- s
				select {
				case <-next:
				case <-ctx.Done():
					return catalog.Result{}, ctx.Err()
				}
			}
			return catalog.Result{Value: "done"}, nil
		}}
	env := startEnv(t, tk)
	s := open(t, env)
	rc := s.call("progress", "step", `{}`)
	for _, want := range []string{"waiting", "running"} {
		if got := <-steps; got != want {
			t.Fatalf("step %q", got)
		}
		if got := decodeReceipt(t, s.get(rc.CallID, "")); got.Status != want || string(got.Outcome) != "null" {
			t.Fatalf("want %s: %s", want, got.raw)
		}
		next <- struct{}{}
	}
	if done := s.await(rc.CallID); done.Status != "completed" || string(done.Outcome) != `"done"` {
		t.Fatalf("receipt %s", done.raw)
	}
}

// Section 8: the tool runs on a frozen copy of the arguments taken at admission; what it does
// to its copy changes neither the replay key nor a later run.
func TestToolGetsAFrozenCopyOfItsArguments(t *testing.T) {
	t.Parallel()
	tk := &fakeToolkit{name: "mutate", description: "Changes its arguments.",
		functions: []catalog.Function{{Name: "it", Description: "Adds a key to its arguments and returns them."}},
		call: func(_ context.Context, c catalog.Call) (catalog.Result, error) {
			c.Arguments["added"] = true
			if inner, ok := c.Arguments["inner"].(map[string]any); ok {
				inner["changed"] = true
			}
			return catalog.Result{Value: c.Arguments}, nil
		}}
	env := startEnv(t, tk)
	s := open(t, env)
	id := uuid.NewString()
	op := callOp(id, "mutate", "it", `{"inner":{"k":1}}`)
	decodeReceipt(t, s.post(op))
	if done := s.await(id); string(done.Outcome) != `{"added":true,"inner":{"changed":true,"k":1}}` {
		t.Fatalf("outcome %s", done.Outcome)
	}
	if rc := decodeReceipt(t, s.post(op)); rc.Status != "completed" {
		t.Fatalf("replay of the original arguments: %s", rc.raw)
	}
	requireStatus(t, s.post(callOp(id, "mutate", "it", `{"added":true,"inner":{"changed":true,"k":1}}`)), http.StatusConflict, "Call ID already belongs to a different operation")
	second := s.call("mutate", "it", `{"inner":{"k":1}}`)
	if done := s.await(second.CallID); string(done.Outcome) != `{"added":true,"inner":{"changed":true,"k":1}}` {
		t.Fatalf("a second call saw another call's changes: %s", done.Outcome)
	}
}
