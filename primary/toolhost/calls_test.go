package toolhost_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	"github.com/turncli/turncli/internal/testenv"
)

func TestCalls(t *testing.T) {
	env := testenv.Start(t)

	t.Run("CallReachesTheHostWithCanonicalArgumentsAndItsValueBecomesTheOutcome", func(t *testing.T) {
		h := connectRaw(t, env, "host-roundtrip")
		h.mustRegister(eager("rt_tk", fn("echo", anyObject)))
		sh := openShell(t, env, env.Open(t), "bash-1")
		id := sh.submit("rt_tk.echo", `{"b":[1,1.0],"a":"é"}`)
		call := h.nextCall()
		if call.GetToolkit() != "rt_tk" || call.GetFunction() != "echo" || call.GetArgumentsJson() != `{"a":"é","b":[1,1.0]}` {
			t.Fatalf("call = %v", call)
		}
		h.reply(call.GetCallId(), ` {"echoed": [1, 1.0, "x"]} `)
		expectReceipt(t, sh.wait(id), "completed", `{"echoed":[1,1,"x"]}`)
	})

	t.Run("InvalidArgumentsNeverReachTheHost", func(t *testing.T) {
		h := connectRaw(t, env, "host-schema")
		h.mustRegister(eager("schema_tk", fn("count", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)))
		sh := openShell(t, env, env.Open(t), "bash-1")
		for _, args := range []string{`{"n":"three"}`, `{}`, `{"n":1,"extra":true}`} {
			r := sh.wait(sh.submit("schema_tk.count", args))
			if msg, _ := r["outcome"].(string); r["status"] != "failed" || !strings.HasPrefix(msg, "Invalid tool arguments") {
				t.Errorf("call with %s = %v, want failed with Invalid tool arguments", args, r)
			}
		}
		id := sh.submit("schema_tk.count", `{"n":3}`)
		// The valid call is the first the host sees: none of the invalid ones came before it.
		call := h.nextCall()
		if call.GetArgumentsJson() != `{"n":3}` {
			t.Fatalf("first call the host saw has arguments %s", call.GetArgumentsJson())
		}
		h.reply(call.GetCallId(), `3`)
		expectReceipt(t, sh.wait(id), "completed", `3`)
	})

	t.Run("IdentityComesFromTheResponseNotFromTheArguments", func(t *testing.T) {
		h := connectRaw(t, env, "host-identity")
		h.mustRegister(eager("id_tk", fn("whoami", anyObject)))
		responseID := env.Open(t)
		sh := openShell(t, env, responseID, "bash-ident")
		id := sh.submit("id_tk.whoami", `{"agent_name":"mallory","requester_id":"@mallory:evil","response_id":"other","channel":"!evil"}`)
		call := h.nextCall()
		want := &toolhostv1.CallIdentity{
			ResponseId: responseID, AgentName: "tester", RequesterId: "@alice:example.org",
			Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$thread"},
		}
		got := call.GetIdentity()
		if got.GetResponseId() != want.GetResponseId() || got.GetAgentName() != want.GetAgentName() ||
			got.GetRequesterId() != want.GetRequesterId() || got.GetConversation().GetChannel() != want.GetConversation().GetChannel() ||
			got.GetConversation().GetThread() != want.GetConversation().GetThread() {
			t.Errorf("identity = %v, want %v", got, want)
		}
		if call.GetAgentCliCallId() != id || call.GetBashCallId() != "bash-ident" {
			t.Errorf("agent_cli_call_id = %q (want %q), bash_call_id = %q", call.GetAgentCliCallId(), id, call.GetBashCallId())
		}
		h.reply(call.GetCallId(), `null`)
		expectReceipt(t, sh.wait(id), "completed", `null`)
	})

	t.Run("WaitingIsVisibleInTheReceiptWhileTheHostSaysWaiting", func(t *testing.T) {
		h := connectRaw(t, env, "host-waiting")
		h.mustRegister(eager("wait_tk", fn("ask", anyObject), fn("ping", anyObject)))
		sh := openShell(t, env, env.Open(t), "bash-1")
		// settled runs a quick call to completion. The primary handles a host's messages in
		// order, so once it has the quick call's result it has applied every progress sent before.
		settled := func() {
			id := sh.submit("wait_tk.ping", `{}`)
			h.reply(h.nextCall().GetCallId(), `"pong"`)
			sh.wait(id)
		}
		ask := sh.submit("wait_tk.ask", `{}`)
		call := h.nextCall()
		if st := sh.get(ask)["status"]; st != "running" {
			t.Errorf("status once dispatched = %v, want running", st)
		}
		h.progress(call.GetCallId(), toolhostv1.CallState_CALL_STATE_WAITING)
		settled()
		if st := sh.get(ask)["status"]; st != "waiting" {
			t.Errorf("status while the host waits = %v, want waiting", st)
		}
		h.progress(call.GetCallId(), toolhostv1.CallState_CALL_STATE_RUNNING)
		settled()
		if st := sh.get(ask)["status"]; st != "running" {
			t.Errorf("status after the host said running = %v, want running", st)
		}
		h.progress(call.GetCallId(), toolhostv1.CallState_CALL_STATE_WAITING)
		h.reply(call.GetCallId(), `{"answer":"yes"}`)
		expectReceipt(t, sh.wait(ask), "completed", `{"answer":"yes"}`)
	})

	t.Run("MediaAttachmentsAppearInTheReceipt", func(t *testing.T) {
		h := connectRaw(t, env, "host-media")
		h.mustRegister(eager("media_tk", fn("snap", anyObject)))
		sh := openShell(t, env, env.Open(t), "bash-1")
		id := sh.submit("media_tk.snap", `{}`)
		h.reply(h.nextCall().GetCallId(), `{"ok":true}`,
			&toolhostv1.Attachment{Kind: toolhostv1.AttachmentKind_ATTACHMENT_KIND_IMAGE, MimeType: "image/png", Name: "pixel.png", Uri: "file:///tmp/pixel.png", Size: 67},
			&toolhostv1.Attachment{Kind: toolhostv1.AttachmentKind_ATTACHMENT_KIND_AUDIO, MimeType: "audio/ogg"})
		r := sh.wait(id)
		expectReceipt(t, r, "completed", `{"ok":true}`)
		want := `[{"kind":"image","mime_type":"image/png","name":"pixel.png","size":67,"uri":"file:///tmp/pixel.png"},{"kind":"audio","mime_type":"audio/ogg"}]`
		if got := canon(t, r["attachments"]); got != want {
			t.Errorf("attachments = %s\nwant %s", got, want)
		}
	})

	t.Run("UnusableResultsFailTheCallClearly", func(t *testing.T) {
		h := connectRaw(t, env, "host-unusable")
		h.mustRegister(eager("bad_tk", fn("f", anyObject)))
		sh := openShell(t, env, env.Open(t), "bash-1")
		for _, tc := range []struct {
			name   string
			answer func(callID string)
			want   string
		}{
			{"HostError", func(id string) { h.fail(id, "the printer is on fire") }, "the printer is on fire"},
			{"ValueThatIsNotJSON", func(id string) { h.reply(id, `{"a":`) }, "Tool host returned a result that is not JSON"},
			{"AttachmentWithoutKind", func(id string) {
				h.reply(id, `1`, &toolhostv1.Attachment{MimeType: "image/png"})
			}, "Tool host returned an invalid attachment 0"},
			{"NeitherValueNorError", func(id string) {
				h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Result{Result: &toolhostv1.CallResult{CallId: id}}})
			}, "Tool host sent a result with neither value_json nor error"},
		} {
			id := sh.submit("bad_tk.f", `{}`)
			tc.answer(h.nextCall().GetCallId())
			r := sh.wait(id)
			if msg, _ := r["outcome"].(string); r["status"] != "failed" || !strings.HasPrefix(msg, tc.want) {
				t.Errorf("%s: receipt = %v, want failed with %q", tc.name, r, tc.want)
			}
		}
	})

	t.Run("HostDisconnectMidCallFailsTheCallAndLaterCallsUntilAHostTakesOver", func(t *testing.T) {
		h := connectRaw(t, env, "host-gone")
		h.mustRegister(eager("gone_tk", fn("f", anyObject)))
		sh := openShell(t, env, env.Open(t), "bash-1")
		id := sh.submit("gone_tk.f", `{}`)
		h.nextCall()
		h.disconnect()
		const gone = `"Toolkit \"gone_tk\" is unavailable: its tool host disconnected"`
		expectReceipt(t, sh.wait(id), "failed", gone)
		expectReceipt(t, sh.wait(sh.submit("gone_tk.f", `{}`)), "failed", gone)
		if _, found := sh.cli("tools", "search", "gone_tk"); canon(t, found["items"]) != `[{"description":"Function f.","function":"f","toolkit":"gone_tk"}]` {
			t.Errorf("the toolkit of a gone host is not listed: %v", found)
		}

		// A host that registers the name again takes it over; the open response sees its new
		// definition at once.
		back := connectRaw(t, env, "host-back")
		back.mustRegister(eager("gone_tk", fn("g", `{"type":"object","properties":{"v":{"type":"string"}}}`)))
		if code, d := sh.cli("tools", "describe", "gone_tk.g"); code != 0 || canon(t, d["input_schema"]) != `{"properties":{"v":{"type":"string"}},"type":"object"}` {
			t.Fatalf("describe of the new function = %d %v", code, d)
		}
		if code, _ := sh.cli("tools", "describe", "gone_tk.f"); code != 2 {
			t.Errorf("describe of the old function exit = %d, want 2 (unknown function)", code)
		}
		id = sh.submit("gone_tk.g", `{"v":"again"}`)
		call := back.nextCall()
		back.reply(call.GetCallId(), call.GetArgumentsJson())
		expectReceipt(t, sh.wait(id), "completed", `{"v":"again"}`)
	})

	t.Run("DeferredToolkitTakenOverIsLoadedAgainFromTheNewHost", func(t *testing.T) {
		serveLoad := func(h *rawHost, function string) {
			load := h.next().GetLoad()
			h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Loaded{Loaded: &toolhostv1.ToolkitLoaded{
				LoadId:  load.GetLoadId(),
				Outcome: &toolhostv1.ToolkitLoaded_Definition{Definition: &toolhostv1.ToolkitDefinition{Functions: []*toolhostv1.Function{fn(function, anyObject)}}},
			}}})
		}
		deferred := &toolhostv1.RegisterToolkit{Name: "relazy_tk", Description: "Deferred, served twice.", Deferred: true}
		first := connectRaw(t, env, "host-lazy-1")
		first.mustRegister(deferred)
		sh := openShell(t, env, env.Open(t), "bash-1")
		done := make(chan int, 1)
		go func() { code, _ := sh.cli("tools", "describe", "relazy_tk.one"); done <- code }()
		serveLoad(first, "one")
		if code := <-done; code != 0 {
			t.Fatalf("describe from the first host exit %d", code)
		}
		first.disconnect()
		second := connectRaw(t, env, "host-lazy-2")
		second.takeOver(deferred, "host-lazy-1")
		go func() { code, _ := sh.cli("tools", "describe", "relazy_tk.two"); done <- code }()
		serveLoad(second, "two")
		if code := <-done; code != 0 {
			t.Fatalf("describe from the second host exit %d", code)
		}
	})

	t.Run("DeferredToolkitOfAGoneHostCannotBeLoaded", func(t *testing.T) {
		h := connectRaw(t, env, "host-lazy-gone")
		h.mustRegister(&toolhostv1.RegisterToolkit{Name: "lost_tk", Description: "Never loaded.", Deferred: true})
		h.disconnect()
		sh := openShell(t, env, env.Open(t), "bash-1")
		// Whether the primary noticed the stream's end before this describe or while its load
		// waited, the load fails the same way.
		code, out := sh.cli("tools", "describe", "lost_tk.f")
		if msg, _ := out["error"].(string); code != 2 || !strings.Contains(msg, `Toolkit "lost_tk" is unavailable: its tool host disconnected`) {
			t.Fatalf("describe = %d %v", code, out)
		}
	})

	t.Run("ClosingTheResponseMidCallSendsCancelToTheHost", func(t *testing.T) {
		h := connectRaw(t, env, "host-cancel")
		h.mustRegister(eager("cancel_tk", fn("block", anyObject)))
		responseID := env.Open(t)
		sh := openShell(t, env, responseID, "bash-1")
		sh.submit("cancel_tk.block", `{}`)
		call := h.nextCall()
		if _, err := env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: responseID}); err != nil {
			t.Fatal(err)
		}
		if cancel := h.next().GetCancel(); cancel.GetCallId() != call.GetCallId() {
			t.Fatalf("message after the response closed = %v, want cancel of %s", cancel, call.GetCallId())
		}
		// A result after the cancel is ignored and the stream goes on.
		h.reply(call.GetCallId(), `"too late"`)
		h.mustRegister(eager("after_cancel_tk", fn("f", anyObject)))
	})

	t.Run("DrainingHostReleasesItsToolkitsAndFinishesItsRunningCalls", func(t *testing.T) {
		old := connectRaw(t, env, "host-draining")
		old.mustRegister(eager("drain_tk", fn("f", anyObject)))
		sh := openShell(t, env, env.Open(t), "bash-1")
		running := sh.submit("drain_tk.f", `{}`)
		call := old.nextCall()
		old.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Drain{Drain: &toolhostv1.Drain{}}})
		// Answered after the drain was handled: a draining host registers nothing.
		if r := old.register(eager("late_tk", fn("f", anyObject))); r.GetRejection().GetReason() != toolhostv1.RejectionReason_REJECTION_REASON_INVALID {
			t.Fatalf("register while draining = %v, want INVALID", r)
		}
		expectReceipt(t, sh.wait(sh.submit("drain_tk.f", `{}`)), "failed", `"Toolkit \"drain_tk\" is unavailable: its tool host is stopping"`)

		successor := connectRaw(t, env, "host-successor")
		successor.mustRegister(eager("drain_tk", fn("f", anyObject)))
		next := sh.submit("drain_tk.f", `{}`)
		successor.reply(successor.nextCall().GetCallId(), `"from the successor"`)
		expectReceipt(t, sh.wait(next), "completed", `"from the successor"`)

		old.reply(call.GetCallId(), `"finished while draining"`)
		expectReceipt(t, sh.wait(running), "completed", `"finished while draining"`)
		if err := old.stream.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if err := old.end(); !errors.Is(err, io.EOF) {
			t.Fatalf("drained stream ended with %v, want a clean end", err)
		}
	})

	t.Run("ProgressWithoutAStateBreaksTheProtocol", func(t *testing.T) {
		h := connectRaw(t, env, "host-bad-progress")
		h.progress("call-1", toolhostv1.CallState_CALL_STATE_UNSPECIFIED)
		if err := h.end(); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("stream ended with %v, want InvalidArgument", err)
		}
	})
}
