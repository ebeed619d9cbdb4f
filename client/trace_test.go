package client

import (
	"context"
	"net/http"
	"testing"
)

const (
	testTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	otherParent     = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

func TestTraceContextIsForwarded(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		traceparent, state    string
		wantParent, wantState string
	}{
		{name: "ShellTraceparentAndTracestateAreSent", traceparent: testTraceparent, state: "vendor=a,other=b",
			wantParent: testTraceparent, wantState: "vendor=a,other=b"},
		{name: "NoTraceparentSendsNoHeaders"},
		{name: "MalformedTraceparentIsDropped", traceparent: "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", state: "vendor=a"},
		{name: "AllZeroTraceIDIsDropped", traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01"},
		{name: "VersionFFIsDropped", traceparent: "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{name: "LaterVersionWithMoreFieldsIsSent", traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future",
			wantParent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future"},
		{name: "TracestateWithControlCharactersIsDropped", traceparent: testTraceparent, state: "a=b\r\nx: y", wantParent: testTraceparent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) { answer(w, 200, `{"items":[]}`) })
			env := srv.env()
			env[envTraceparent], env[envTracestate] = tc.traceparent, tc.state
			runCLI(t, env, "", "tools", "list").wantCode(t, ExitCompleted)
			h := srv.requests()[0].header
			if h.Get("Traceparent") != tc.wantParent || h.Get("Tracestate") != tc.wantState {
				t.Fatalf("sent traceparent %q tracestate %q, want %q %q", h.Get("Traceparent"), h.Get("Tracestate"), tc.wantParent, tc.wantState)
			}
		})
	}
}

func TestWithTraceOverridesTheShells(t *testing.T) {
	for _, tc := range []struct {
		name, override, want string
	}{
		{name: "WellFormedOverrideIsSent", override: otherParent, want: otherParent},
		{name: "MalformedOverrideKeepsTheShells", override: "not-a-traceparent", want: testTraceparent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shell := newTraceContext(testTraceparent, "")
			if got := traceFor(WithTrace(context.Background(), tc.override, ""), shell); got.parent != tc.want {
				t.Fatalf("traceparent %q, want %q", got.parent, tc.want)
			}
		})
	}
}
