// Package telemetry is the one home of tracing setup for the primary, the worker and tool
// hosts: it builds a process's TracerProvider from the standard OTEL_* environment (OTLP over
// gRPC, off unless configured), fixes the W3C trace-context propagator every hop uses, carries
// a span context across the places that are not HTTP or gRPC headers (a shell's environment, a
// field of a stream message), and flushes spans at shutdown.
//
// When tracing is off the provider is a no-op whose spans are non-recording yet keep the
// context they were started in, so a traceparent that arrives still reaches a shell and every
// later hop, at near zero cost. What a span is named and what it records belong to the code
// that starts it; the wiring of handlers into servers belongs to each process.
package telemetry
