package fault_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/turncli/turncli/internal/fault"
)

var errSentinel = fault.New(fault.NotFound, "not found")

func TestPublic(t *testing.T) {
	details := &errdetails.PreconditionFailure{}
	for _, tc := range []struct {
		name    string
		err     error
		kind    fault.Kind
		msg     string
		details int
	}{
		{"AnErrorSaysItsOwnKindAndMessage", fault.New(fault.LimitExceeded, "At most 64"), fault.LimitExceeded, "At most 64", 0},
		{"AWrappedSentinelKeepsItsKindAndShowsTheWholeText", fmt.Errorf("%w: approval 7", errSentinel), fault.NotFound, "not found: approval 7", 0},
		{"AFormattedErrorIsNotWrapped", fault.Newf(fault.InvalidArgument, "bad: %v", errSentinel), fault.InvalidArgument, "bad: not found", 0},
		{"DetailsTravelWithTheError", fault.WithDetails(fault.FailedPrecondition, "preflight", details), fault.FailedPrecondition, "preflight", 1},
		{"AnUnknownErrorIsInternalAndHidesItsText", errors.New("disk I/O error at /var/lib/secret"), fault.Internal, fault.InternalText, 0},
		{"ACancelledContextIsCanceled", fmt.Errorf("read: %w", context.Canceled), fault.Canceled, "request cancelled", 0},
		{"AnExpiredContextIsDeadlineExceeded", context.DeadlineExceeded, fault.DeadlineExceeded, "request deadline exceeded", 0},
		{"AnInternalErrorMaySayWhatTheCallerMayRead", fault.New(fault.Internal, "could not save; try again"), fault.Internal, "could not save; try again", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, msg, d := fault.Public(tc.err)
			if k != tc.kind || msg != tc.msg || len(d) != tc.details {
				t.Fatalf("Public = %v %q %d details; want %v %q %d", k, msg, len(d), tc.kind, tc.msg, tc.details)
			}
		})
	}
}

func TestIs(t *testing.T) {
	wrapped := fmt.Errorf("%w: job 3", fault.New(fault.Conflict, "already decided"))
	if !fault.Is(wrapped, fault.Conflict) || fault.Is(wrapped, fault.NotFound) {
		t.Fatal("Is does not follow the wrapped Error's kind")
	}
	if fault.Is(nil, fault.Internal) {
		t.Fatal("a nil error is of no kind")
	}
	if !errors.Is(fmt.Errorf("%w: x", errSentinel), errSentinel) {
		t.Fatal("errors.Is does not find a wrapped sentinel")
	}
	var e *fault.Error
	if !errors.As(wrapped, &e) || e.Kind != fault.Conflict {
		t.Fatal("errors.As does not find the Error")
	}
}

func TestEveryKindHasAName(t *testing.T) {
	for _, k := range fault.Kinds() {
		if k.String() == "" || k.String() == fmt.Sprintf("Kind(%d)", uint8(k)) {
			t.Errorf("kind %d has no name", uint8(k))
		}
	}
}
