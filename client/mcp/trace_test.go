package mcp

import (
	"strings"
	"testing"
)

func TestMCPCallsCarryTheEnginesTraceContext(t *testing.T) {
	const (
		shellParent  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		engineParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	)
	for _, tc := range []struct {
		name, params          string
		wantParent, wantState string
	}{
		{name: "MetaTraceparentReplacesTheShells",
			params:     `{"name":"test__echo","arguments":{},"_meta":{"traceparent":"` + engineParent + `","tracestate":"engine=1"}}`,
			wantParent: engineParent, wantState: "engine=1"},
		{name: "WithoutMetaTheShellsIsSent", params: `{"name":"test__echo","arguments":{}}`, wantParent: shellParent, wantState: "shell=1"},
		{name: "MalformedMetaTraceparentKeepsTheShells",
			params:     `{"name":"test__echo","arguments":{},"_meta":{"traceparent":"00-xyz"}}`,
			wantParent: shellParent, wantState: "shell=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAgentCLI(t)
			env := f.env()
			env["TRACEPARENT"], env["TRACESTATE"] = shellParent, "shell=1"
			m := startMCP(t, env, 0)
			m.initialize("2025-06-18")
			if res := m.result(`1`, "tools/call", tc.params); res["isError"] != false {
				t.Fatalf("result %v", res)
			}
			var posts int
			for _, r := range f.srv.requests() {
				if r.method != "POST" || !strings.Contains(r.body, `"tools.call"`) {
					continue
				}
				posts++
				if r.header.Get("Traceparent") != tc.wantParent || r.header.Get("Tracestate") != tc.wantState {
					t.Fatalf("tools.call sent traceparent %q tracestate %q, want %q %q",
						r.header.Get("Traceparent"), r.header.Get("Tracestate"), tc.wantParent, tc.wantState)
				}
			}
			if posts != 1 {
				t.Fatalf("%d tools.call requests", posts)
			}
		})
	}
}
