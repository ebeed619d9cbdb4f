package toolhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/turncli/turncli/client"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// patience bounds every wait of a test; reaching it is a failure, never a way to synchronise.
const patience = 20 * time.Second

// rawHost is a tool host written against the protocol directly, so tests control every message.
type rawHost struct {
	t      testing.TB
	stream toolhostv1.ToolHostService_ConnectClient
	cancel context.CancelFunc
	msgs   chan *toolhostv1.ConnectResponse // closed after the stream ended
	ended  chan error                       // the stream's final Recv error
}

// openRaw opens a stream on conn without sending anything.
func openRaw(t testing.TB, conn *grpc.ClientConn) *rawHost {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := toolhostv1.NewToolHostServiceClient(conn).Connect(ctx)
	if err != nil {
		cancel()
		t.Fatalf("Connect: %v", err)
	}
	h := &rawHost{t: t, stream: stream, cancel: cancel, msgs: make(chan *toolhostv1.ConnectResponse, 64), ended: make(chan error, 1)}
	go func() {
		defer close(h.msgs)
		for {
			m, err := stream.Recv()
			if err != nil {
				h.ended <- err
				return
			}
			h.msgs <- m
		}
	}()
	t.Cleanup(h.disconnect)
	return h
}

// connectRaw opens a stream as host id and completes the handshake.
func connectRaw(t testing.TB, env *testenv.Env, id string) *rawHost {
	t.Helper()
	h := openRaw(t, env.Conn)
	h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Hello{Hello: &toolhostv1.Hello{HostId: id}}})
	if m := h.next(); m.GetWelcome().GetSessionId() == "" {
		t.Fatalf("answer to hello = %v, want welcome", m)
	}
	return h
}

// disconnect ends the stream abruptly, as a crashed host would, and waits until it has ended.
func (h *rawHost) disconnect() {
	h.cancel()
	for range h.msgs {
	}
}

func (h *rawHost) send(m *toolhostv1.ConnectRequest) {
	h.t.Helper()
	if err := h.stream.Send(m); err != nil {
		h.t.Fatalf("Send: %v", err)
	}
}

// next is the primary's next message.
func (h *rawHost) next() *toolhostv1.ConnectResponse {
	h.t.Helper()
	select {
	case m, ok := <-h.msgs:
		if !ok {
			h.t.Fatalf("stream ended: %v", <-h.ended)
		}
		return m
	case <-time.After(patience):
		h.t.Fatalf("no message from the primary")
	}
	return nil
}

// end waits for the primary to end the stream and returns its status.
func (h *rawHost) end() error {
	h.t.Helper()
	deadline := time.After(patience)
	for {
		select {
		case m, ok := <-h.msgs:
			if !ok {
				return <-h.ended
			}
			h.t.Logf("message before the end: %v", m)
		case <-deadline:
			h.t.Fatalf("the primary did not end the stream")
		}
	}
}

func (h *rawHost) register(req *toolhostv1.RegisterToolkit) *toolhostv1.ToolkitRegistered {
	h.t.Helper()
	h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Register{Register: req}})
	m := h.next()
	if m.GetRegistered() == nil {
		h.t.Fatalf("answer to register = %v, want registered", m)
	}
	return m.GetRegistered()
}

// mustRegister registers req and fails the test on a rejection.
func (h *rawHost) mustRegister(req *toolhostv1.RegisterToolkit) {
	h.t.Helper()
	if r := h.register(req); r.GetRejection() != nil {
		h.t.Fatalf("register %s rejected: %v", req.GetName(), r.GetRejection())
	}
}

// takeOver registers req, a name a disconnected host served: the primary lets the name go
// when it has seen that host's stream end, which happens after the host's own side ended, so
// the registration is retried while the name is still that host's, for at most patience.
func (h *rawHost) takeOver(req *toolhostv1.RegisterToolkit, gone string) {
	h.t.Helper()
	held := fmt.Sprintf("toolkit %q is already served by tool host %q", req.GetName(), gone)
	for deadline := time.Now().Add(patience); ; {
		r := h.register(req)
		if r.GetRejection() == nil {
			return
		}
		if r.GetRejection().GetMessage() != held || time.Now().After(deadline) {
			h.t.Fatalf("register %s rejected: %v", req.GetName(), r.GetRejection())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nextCall is the primary's next message, which must be a call.
func (h *rawHost) nextCall() *toolhostv1.StartCall {
	h.t.Helper()
	m := h.next()
	if m.GetCall() == nil {
		h.t.Fatalf("message = %v, want call", m)
	}
	return m.GetCall()
}

func (h *rawHost) reply(callID, valueJSON string, attachments ...*toolhostv1.Attachment) {
	h.t.Helper()
	h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Result{Result: &toolhostv1.CallResult{
		CallId: callID, Outcome: &toolhostv1.CallResult_ValueJson{ValueJson: valueJSON}, Attachments: attachments,
	}}})
}

func (h *rawHost) fail(callID, msg string) {
	h.t.Helper()
	h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Result{Result: &toolhostv1.CallResult{
		CallId: callID, Outcome: &toolhostv1.CallResult_Error{Error: msg},
	}}})
}

func (h *rawHost) progress(callID string, s toolhostv1.CallState) {
	h.t.Helper()
	h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Progress{Progress: &toolhostv1.CallProgress{CallId: callID, State: s}}})
}

// eager is a RegisterToolkit of an eager toolkit with one function per name, each taking any
// object unless schemas says otherwise.
func eager(name string, functions ...*toolhostv1.Function) *toolhostv1.RegisterToolkit {
	return &toolhostv1.RegisterToolkit{
		Name: name, Description: "Toolkit " + name + " served by a test host.",
		Definition: &toolhostv1.ToolkitDefinition{Instructions: []string{"Instructions of " + name + "."}, Functions: functions},
	}
}

func fn(name, schema string) *toolhostv1.Function {
	return &toolhostv1.Function{Name: name, Description: "Function " + name + ".", InputSchemaJson: schema}
}

const anyObject = `{"type":"object"}`

// shell is a window of a response, as a Bash command would have it, driving mindroom-agent in
// process.
type shell struct {
	t   testing.TB
	env map[string]string
}

// openShell opens a window bashCallID in response id.
func openShell(t testing.TB, env *testenv.Env, responseID, bashCallID string) *shell {
	t.Helper()
	w, err := env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: responseID, BashCallId: bashCallID})
	if err != nil {
		t.Fatalf("OpenWindow: %v", err)
	}
	return &shell{t: t, env: w.GetEnvironment()}
}

// cli runs mindroom-agent with args and returns its exit code and its JSON output.
func (s *shell) cli(args ...string) (int, map[string]any) {
	s.t.Helper()
	var stdout, stderr bytes.Buffer
	code := client.Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr, func(k string) string { return s.env[k] })
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		s.t.Fatalf("mindroom-agent %v: stdout %q (stderr %q): %v", args, stdout.String(), stderr.String(), err)
	}
	return code, out
}

// submit makes a call and returns its id without waiting for it.
func (s *shell) submit(tool, args string) string {
	s.t.Helper()
	_, r := s.cli("tools", "call", tool, args, "--timeout", "0")
	id, _ := r["call_id"].(string)
	// A call that settles within the primary's fast-call budget is answered terminal at once.
	if st, _ := r["status"].(string); id == "" || (st != "queued" && st != "running" && st != "completed" && st != "failed") {
		s.t.Fatalf("submit %s: receipt %v", tool, r)
	}
	return id
}

// wait returns the call's receipt once it is terminal.
func (s *shell) wait(callID string) map[string]any {
	s.t.Helper()
	_, r := s.cli("calls", "wait", callID, "--timeout", "20")
	if st, _ := r["status"].(string); st != "completed" && st != "failed" && st != "cancelled" {
		s.t.Fatalf("call %s did not settle: %v", callID, r)
	}
	return r
}

// get returns the call's receipt as it stands.
func (s *shell) get(callID string) map[string]any {
	s.t.Helper()
	_, r := s.cli("calls", "get", callID)
	return r
}

// canon is v as compact JSON with sorted keys, for comparing parsed JSON.
func canon(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expectReceipt checks a terminal receipt's status and outcome (as compact JSON).
func expectReceipt(t testing.TB, r map[string]any, status, outcome string) {
	t.Helper()
	if r["status"] != status || canon(t, r["outcome"]) != outcome {
		t.Fatalf("receipt = %v, want status %s outcome %s", r, status, outcome)
	}
}
