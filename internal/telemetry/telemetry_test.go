package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestNewReadsTheStandardVariables(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		on      bool
		wantErr bool
	}{
		{name: "NothingSetIsOff", env: nil},
		{name: "EndpointTurnsItOn", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, on: true},
		{name: "TracesEndpointTurnsItOn", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "127.0.0.1:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, on: true},
		{name: "ExporterOTLPTurnsItOnWithTheDefaultEndpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{name: "ExporterNoneWinsOverAnEndpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}},
		{name: "SDKDisabledWinsOverAnEndpoint", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}},
		{name: "UnknownExporterIsRefused", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, wantErr: true},
		{name: "HTTPProtocolIsRefused", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, wantErr: true},
		{name: "TracesProtocolOverridesTheGeneralOne", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, on: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel, err := New(context.Background(), "test", func(k string) string { return tc.env[k] })
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if tel.Enabled() != tc.on {
				t.Fatalf("enabled %v, want %v", tel.Enabled(), tc.on)
			}
			if err := tel.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestPropagation(t *testing.T) {
	t.Run("DisabledTracingKeepsTheIncomingContextForTheShell", func(t *testing.T) {
		ctx := Extract(context.Background(), parent, "k=v")
		ctx, span := Disabled().Tracer("t").Start(ctx, "bash")
		defer span.End()
		env := ShellEnv(ctx)
		if env[TraceparentEnv] != parent || env[TracestateEnv] != "k=v" {
			t.Fatalf("env %v", env)
		}
	})
	t.Run("NoContextGivesNoVariables", func(t *testing.T) {
		if env := ShellEnv(context.Background()); env != nil {
			t.Fatalf("env %v", env)
		}
	})
	t.Run("MalformedTraceparentIsIgnored", func(t *testing.T) {
		if tp, _ := Inject(Extract(context.Background(), "00-zz-00-01", "")); tp != "" {
			t.Fatalf("traceparent %q", tp)
		}
	})
	t.Run("EnabledTracingStartsAChildOfTheIncomingContext", func(t *testing.T) {
		tel, err := New(context.Background(), "test", func(k string) string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { // nothing listens there: give up the export at once
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_ = tel.Shutdown(ctx)
		}()
		ctx, span := tel.Tracer("t").Start(Extract(context.Background(), parent, ""), "bash")
		defer span.End()
		tp, _ := Inject(ctx)
		if tp[:36] != parent[:36] || tp == parent {
			t.Fatalf("traceparent %q: want the same trace, a new span", tp)
		}
	})
}

func TestContinueHTTPCarriesTheCallersTraceWithoutASpan(t *testing.T) {
	for _, tc := range []struct {
		name        string
		traceparent string
		wantSpan    string // the span id the handler's context holds; "" for none
	}{
		{name: "ATraceparentIsTheRequestsRemoteParent", traceparent: parent, wantSpan: "00f067aa0ba902b7"},
		{name: "NoTraceparentLeavesNoSpanContext"},
		{name: "AMalformedTraceparentIsIgnored", traceparent: "00-zz-00f067aa0ba902b7-01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got trace.SpanContext
			h := ContinueHTTP(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				got = trace.SpanContextFromContext(r.Context())
			}))
			req := httptest.NewRequest(http.MethodPost, "/api/agent-cli/operations", nil)
			if tc.traceparent != "" {
				req.Header.Set(TraceparentKey, tc.traceparent)
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			if tc.wantSpan == "" {
				if got.IsValid() {
					t.Fatalf("span context %v, want none", got)
				}
				return
			}
			if got.SpanID().String() != tc.wantSpan || got.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || !got.IsRemote() {
				t.Fatalf("span context %v, want the caller's span %s as a remote parent", got, tc.wantSpan)
			}
		})
	}
}
