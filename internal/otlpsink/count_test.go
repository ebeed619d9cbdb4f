package otlpsink

import (
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestCountSpansCountsEverySpanOfEveryResourceAndScope(t *testing.T) {
	spans := func(n int) []*tracepb.Span {
		var out []*tracepb.Span
		for range n {
			out = append(out, &tracepb.Span{Name: "s", TraceId: make([]byte, 16), SpanId: make([]byte, 8),
				Attributes: []*commonpb.KeyValue{{Key: "k", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "v"}}}}})
		}
		return out
	}
	req := &collectortrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name"}}},
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "a"}, Spans: spans(3)}, {Spans: spans(0)}, {Spans: spans(4)}}},
		{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans(5)}}, SchemaUrl: "https://example.invalid"},
	}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := countSpans(b)
	if err != nil || n != 12 {
		t.Fatalf("countSpans = %d, %v; want 12 spans", n, err)
	}
	if _, err := countSpans(b[:len(b)-1]); err == nil {
		t.Fatal("a truncated request was counted without error")
	}
}
