package otlpsink

import (
	"fmt"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// countingCodec is the gRPC codec of a receiver that only counts: an export request's spans are
// counted on the wire and the handler gets an empty request; every other message (the
// responses) goes through the proto codec.
type countingCodec struct{ r *Receiver }

var protoCodec = encoding.GetCodecV2(proto.Name)

func (countingCodec) Name() string { return proto.Name }

func (countingCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (c countingCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if _, ok := v.(*collectortrace.ExportTraceServiceRequest); !ok {
		return protoCodec.Unmarshal(data, v)
	}
	// A pooled copy: a collector on another machine would not add its garbage to the
	// measured process's.
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	n, err := countSpans(buf.ReadOnlyData())
	buf.Free()
	if err != nil {
		return err
	}
	c.r.mu.Lock()
	c.r.count += n
	c.r.mu.Unlock()
	return nil
}

// The field numbers of the path to a span: ExportTraceServiceRequest.resource_spans,
// ResourceSpans.scope_spans, ScopeSpans.spans.
const (
	resourceSpansField protowire.Number = 1
	scopeSpansField    protowire.Number = 2
	spansField         protowire.Number = 2
)

// countSpans counts the spans an encoded ExportTraceServiceRequest holds.
func countSpans(b []byte) (int, error) {
	n := 0
	err := eachField(b, resourceSpansField, func(rs []byte) error {
		return eachField(rs, scopeSpansField, func(ss []byte) error {
			return eachField(ss, spansField, func([]byte) error { n++; return nil })
		})
	})
	return n, err
}

// eachField calls fn with the bytes of every length-delimited field numbered num in the message
// b, skipping the others.
func eachField(b []byte, num protowire.Number, fn func([]byte) error) error {
	for len(b) > 0 {
		got, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("otlp request: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if got == num && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fmt.Errorf("otlp request: %w", protowire.ParseError(n))
			}
			if err := fn(v); err != nil {
				return err
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(got, typ, b)
		if n < 0 {
			return fmt.Errorf("otlp request: %w", protowire.ParseError(n))
		}
		b = b[n:]
	}
	return nil
}
