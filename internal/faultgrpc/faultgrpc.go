// Package faultgrpc is the gRPC edge of the fault vocabulary: the one table from fault.Kind to a
// gRPC code, and the server interceptors that apply it to every service's errors. A REST edge
// then maps the code to HTTP once (grpc-gateway's table for the public REST API, the Agent CLI
// contract's table for its two routes).
//
// It chooses codes and hides internal faults: every Internal status it makes names, in its
// message and in a google.rpc.RequestInfo detail, the error_id of the line of the primary's log
// that records the fault (HiddenID reads it back). It decides nothing about who may call what.
package faultgrpc

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	"github.com/turncli/turncli/internal/fault"
)

// codeOf is the one mapping from a kind to its gRPC code.
var codeOf = map[fault.Kind]codes.Code{
	fault.Internal:           codes.Internal,
	fault.InvalidArgument:    codes.InvalidArgument,
	fault.NotFound:           codes.NotFound,
	fault.AlreadyExists:      codes.AlreadyExists,
	fault.Conflict:           codes.Aborted,
	fault.FailedPrecondition: codes.FailedPrecondition,
	fault.LimitExceeded:      codes.ResourceExhausted,
	fault.TooLarge:           codes.OutOfRange,
	fault.PermissionDenied:   codes.PermissionDenied,
	fault.Unauthenticated:    codes.Unauthenticated,
	fault.Unavailable:        codes.Unavailable,
	fault.Canceled:           codes.Canceled,
	fault.DeadlineExceeded:   codes.DeadlineExceeded,
}

// Code returns the gRPC code of kind k.
func Code(k fault.Kind) codes.Code {
	if c, ok := codeOf[k]; ok {
		return c
	}
	return codes.Internal
}

// kindOf is codeOf reversed, for what a client receives.
var kindOf = func() map[codes.Code]fault.Kind {
	m := make(map[codes.Code]fault.Kind, len(codeOf))
	for k, c := range codeOf {
		m[c] = k
	}
	return m
}()

// FromStatus returns an error a gRPC client call returned as the fault it stands for: the kind
// whose code it carries, with the status's message and hidden fault's id, so a client of the
// primary's own services (the dashboard) judges errors by kind as the services made them. An
// error that is not a gRPC status passes unchanged; a code no kind maps to is Internal.
func FromStatus(err error) error {
	var fe *fault.Error
	if err == nil || errors.As(err, &fe) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	k, known := kindOf[st.Code()]
	if !known {
		k = fault.Internal
	}
	return &fault.Error{Kind: k, Message: st.Message(), ID: HiddenID(st)}
}

// HiddenID returns the error_id an Internal status names (Status attached it), or "" when st
// hides no fault of the primary's.
func HiddenID(st *status.Status) string {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RequestInfo); ok && ri.GetRequestId() != "" {
			return ri.GetRequestId()
		}
	}
	return ""
}

// Status returns err as the gRPC status error its caller receives. A status error already made
// (by gRPC itself, or by a stream it ended) passes unchanged. An internal fault is logged on log
// (nil discards) with a fresh error_id (fault.Hide) and answered as Internal naming that id:
// with fault.InternalText for an error that is not a fault.Error, with its own text for an
// Internal fault.Error, which its maker wrote for the caller (and which passes unlogged when
// its maker hid it already).
func Status(ctx context.Context, log *slog.Logger, method string, err error) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &fe) && errors.As(err, &se) {
		return err
	}
	if k, _ := fault.KindOf(err); k == fault.Internal && (fe == nil || fe.ID == "") {
		what := fault.InternalText
		if fe != nil {
			what = err.Error()
		}
		fe = fault.Hidden(fault.Hide(ctx, log, err, "internal error", "method", method), what)
		err = fe
	}
	k, msg, details := fault.Public(err)
	if fe != nil && fe.ID != "" {
		details = append(details[:len(details):len(details)], &errdetails.RequestInfo{RequestId: fe.ID})
	}
	st := status.New(Code(k), msg)
	if len(details) > 0 {
		v1 := make([]protoadapt.MessageV1, len(details))
		for i, d := range details {
			v1[i] = protoadapt.MessageV1Of(d)
		}
		if withDetails, derr := st.WithDetails(v1...); derr == nil {
			st = withDetails
		}
	}
	return st.Err()
}

// ServerOptions installs both interceptors on a gRPC server, ahead of any chained after them.
// A nil log discards.
func ServerOptions(log *slog.Logger) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(UnaryServerInterceptor(log)),
		grpc.ChainStreamInterceptor(StreamServerInterceptor(log)),
	}
}

// UnaryServerInterceptor maps every unary handler's error with Status. It goes first in the
// chain, so the errors of the interceptors after it (authentication included) are mapped too.
func UnaryServerInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if err != nil {
			return nil, Status(ctx, log, info.FullMethod, err)
		}
		return resp, nil
	}
}

// StreamServerInterceptor maps every streaming handler's error with Status.
func StreamServerInterceptor(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		return Status(ss.Context(), log, info.FullMethod, h(srv, ss))
	}
}
