package mcpbridge

import (
	"context"
	"testing"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/catalog"
)

func TestToolsCallCarriesTheTraceContextInMeta(t *testing.T) {
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tk := mount(t, stdioConfig(), Options{})
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{name: "DispatchContextIsTheMetaTraceparentAndTracestate",
			ctx:  telemetry.Extract(context.Background(), traceparent, "vendor=1"),
			want: `{"traceparent":"` + traceparent + `","tracestate":"vendor=1"}`},
		{name: "UntracedCallSendsNoMeta", ctx: context.Background(), want: `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tk.Call(tc.ctx, catalog.Call{Toolkit: tk.Name(), Function: "trace_meta"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := canonjson.Marshal(res.Value)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("the server saw _meta %s, want %s", got, tc.want)
			}
		})
	}
}
