package faultgrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/turncli/turncli/internal/agentclihttp"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
)

// The one mapping: each kind has one gRPC code, and each code one HTTP status on the public
// REST API (grpc-gateway's table) and one on the Agent CLI routes (the contract's table; a
// kind the Agent CLI never answers is its 500).
func TestEveryKindHasOneCodeAndOneHTTPStatusPerREST(t *testing.T) {
	table := []struct {
		kind     fault.Kind
		code     codes.Code
		rest     int
		agentCLI int
	}{
		{fault.Internal, codes.Internal, 500, 500},
		{fault.InvalidArgument, codes.InvalidArgument, 400, 422},
		{fault.NotFound, codes.NotFound, 404, 500},
		{fault.AlreadyExists, codes.AlreadyExists, 409, 500},
		{fault.Conflict, codes.Aborted, 409, 409},
		{fault.FailedPrecondition, codes.FailedPrecondition, 400, 409},
		{fault.LimitExceeded, codes.ResourceExhausted, 429, 422},
		{fault.TooLarge, codes.OutOfRange, 400, 413},
		{fault.PermissionDenied, codes.PermissionDenied, 403, 500},
		{fault.Unauthenticated, codes.Unauthenticated, 401, 401},
		{fault.Unavailable, codes.Unavailable, 503, 500},
		{fault.Canceled, codes.Canceled, 499, 499},
		{fault.DeadlineExceeded, codes.DeadlineExceeded, 504, 500},
	}
	if len(table) != len(fault.Kinds()) {
		t.Fatalf("the table covers %d kinds; there are %d", len(table), len(fault.Kinds()))
	}
	for _, tc := range table {
		t.Run(tc.kind.String(), func(t *testing.T) {
			code := status.Code(faultgrpc.Status(t.Context(), nil, "/t", fault.New(tc.kind, "m")))
			if code != tc.code || faultgrpc.Code(tc.kind) != tc.code {
				t.Fatalf("code %v, want %v", code, tc.code)
			}
			if got := runtime.HTTPStatusFromCode(code); got != tc.rest {
				t.Errorf("REST status %d, want %d", got, tc.rest)
			}
			if got := agentclihttp.HTTPStatus(code); got != tc.agentCLI {
				t.Errorf("Agent CLI status %d, want %d", got, tc.agentCLI)
			}
		})
	}
}

// capture returns a JSON logger and the lines written to it.
func capture(t *testing.T) (*slog.Logger, func() []map[string]any) {
	var b bytes.Buffer
	return slog.New(slog.NewJSONHandler(&b, nil)), func() []map[string]any {
		var lines []map[string]any
		for _, l := range bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(l, &m); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			lines = append(lines, m)
		}
		return lines
	}
}

func TestStatus(t *testing.T) {
	already := status.Error(codes.Unavailable, "transport closing")
	for _, tc := range []struct {
		name   string
		err    error
		code   codes.Code
		msg    string // with %s for the error id when the fault is hidden
		logged bool
	}{
		{"AFaultKeepsItsMessage", fault.New(fault.NotFound, "no such job"), codes.NotFound, "no such job", false},
		{"AWrappedFaultShowsTheWholeText", fmt.Errorf("%w: job 3", fault.New(fault.Conflict, "already decided")), codes.Aborted, "already decided: job 3", false},
		{"AStatusMadeByGRPCPassesUnchanged", already, codes.Unavailable, "transport closing", false},
		{"AnEndedContextIsCanceled", context.Canceled, codes.Canceled, "request cancelled", false},
		{"AnUnknownErrorIsInternalLoggedAndHiddenBehindAnID", errors.New("sqlite: disk I/O error"), codes.Internal, "internal error (id %s); see the primary's log", true},
		{"AnInternalFaultKeepsItsTextAndGetsAnID", fault.New(fault.Internal, "could not save; try again"), codes.Internal, "could not save; try again (id %s); see the primary's log", true},
		{"AFaultHiddenAlreadyIsNotLoggedAgain", fault.Hidden("0badf00d", "the log of job 7 could not be read"), codes.Internal, "the log of job 7 could not be read (id 0badf00d); see the primary's log", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, lines := capture(t)
			st := status.Convert(faultgrpc.Status(t.Context(), log, "/svc/Method", tc.err))
			id := faultgrpc.HiddenID(st)
			msg := tc.msg
			if strings.Contains(msg, "%s") {
				msg = fmt.Sprintf(msg, id)
			}
			if st.Code() != tc.code || st.Message() != msg {
				t.Fatalf("status %v %q, want %v %q", st.Code(), st.Message(), tc.code, msg)
			}
			if (id != "") != (tc.code == codes.Internal) {
				t.Fatalf("status %v names error id %q", st.Code(), id)
			}
			logged := lines()
			if got := len(logged) > 0; got != tc.logged {
				t.Fatalf("logged = %v, want %v", got, tc.logged)
			}
			if tc.logged && (logged[0][fault.IDKey] != id || logged[0]["method"] != "/svc/Method" || logged[0]["err"] != tc.err.Error()) {
				t.Fatalf("log line %v does not carry error_id %s, the method and the error", logged[0], id)
			}
			if id != "" {
				if fe, ok := faultgrpc.FromStatus(st.Err()).(*fault.Error); !ok || fe.Kind != fault.Internal || fe.ID != id {
					t.Fatalf("FromStatus = %#v, want the Internal fault naming id %s", faultgrpc.FromStatus(st.Err()), id)
				}
			}
		})
	}
	t.Run("DetailsTravelInTheStatus", func(t *testing.T) {
		pf := &errdetails.PreconditionFailure{Violations: []*errdetails.PreconditionFailure_Violation{{Type: "workspace"}}}
		st := status.Convert(faultgrpc.Status(t.Context(), nil, "/t", fault.WithDetails(fault.FailedPrecondition, "preflight", pf)))
		if len(st.Details()) != 1 {
			t.Fatalf("details %v, want the PreconditionFailure", st.Details())
		}
		if got, ok := st.Details()[0].(*errdetails.PreconditionFailure); !ok || got.GetViolations()[0].GetType() != "workspace" {
			t.Fatalf("detail %v", st.Details()[0])
		}
	})
}

func TestInterceptorsMapWhatHandlersReturn(t *testing.T) {
	unary := faultgrpc.UnaryServerInterceptor(nil)
	_, err := unary(t.Context(), nil, &grpc.UnaryServerInfo{FullMethod: "/t"}, func(context.Context, any) (any, error) {
		return nil, fault.New(fault.LimitExceeded, "At most 64 CLI operations may run at once")
	})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("unary: %v", err)
	}
	stream := faultgrpc.StreamServerInterceptor(nil)
	err = stream(nil, serverStream{ctx: t.Context()}, &grpc.StreamServerInfo{FullMethod: "/t"}, func(any, grpc.ServerStream) error {
		return fault.New(fault.Unavailable, "the primary is stopping")
	})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("stream: %v", err)
	}
	if _, err := unary(t.Context(), nil, &grpc.UnaryServerInfo{FullMethod: "/t"}, func(context.Context, any) (any, error) {
		return "ok", nil
	}); err != nil {
		t.Fatalf("success: %v", err)
	}
}

// serverStream is a stream whose handler never reads or writes it.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s serverStream) Context() context.Context { return s.ctx }
