// Package otlpsink is an OTLP trace receiver in the process: a real gRPC server implementing
// the collector's TraceService that keeps every span it is sent, with the service that sent
// it. Tests assert traces with it and the bench measures the cost of exporting to it. It is no
// collector: it keeps spans in memory and forwards nothing.
package otlpsink

import (
	"context"
	"encoding/hex"
	"net"
	"sync"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// Span is one received span, its ids in lower-case hex as traceparent writes them.
type Span struct {
	Service, Name             string
	TraceID, SpanID, ParentID string // ParentID empty for a root span
	Kind                      tracepb.Span_SpanKind
}

// Receiver is a running OTLP/gRPC trace receiver.
type Receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	srv *grpc.Server
	lis net.Listener

	mu    sync.Mutex
	spans []Span
	keep  bool
	count int
}

// Start serves a receiver on a loopback port until Stop. keep false only counts spans, reading
// each request's wire bytes without decoding them (see countingCodec): for measurements that
// send many, where the receiver stands in for a collector on another machine and its own cost
// should weigh as little as it can on the process measured.
func Start(keep bool) (*Receiver, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{lis: lis, keep: keep}
	var opts []grpc.ServerOption
	if !keep {
		opts = append(opts, grpc.ForceServerCodecV2(countingCodec{r: r}))
	}
	r.srv = grpc.NewServer(opts...)
	collectortrace.RegisterTraceServiceServer(r.srv, r)
	go func() { _ = r.srv.Serve(lis) }()
	return r, nil
}

// Endpoint is the OTEL_EXPORTER_OTLP_ENDPOINT of the receiver (plaintext).
func (r *Receiver) Endpoint() string { return "http://" + r.lis.Addr().String() }

// Stop stops the server.
func (r *Receiver) Stop() { r.srv.Stop() }

// Export implements the OTLP TraceService.
func (r *Receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		var service string
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.count++
				if !r.keep {
					continue
				}
				r.spans = append(r.spans, Span{
					Service: service, Name: s.GetName(), Kind: s.GetKind(),
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()),
				})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// Spans returns the spans kept so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Count is how many spans were received.
func (r *Receiver) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}
