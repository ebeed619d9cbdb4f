package agentcli

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/turncli/turncli/internal/clierr"
)

// toStatus maps a domain error to its gRPC status, once, here. Errors that are not domain
// errors are faults of the primary: logged, and reported without their text.
func toStatus(log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	var e *clierr.Error
	if errors.As(err, &e) {
		return status.Error(codeOf(e.Kind), e.Message)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "request cancelled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "request deadline exceeded")
	}
	log.Error("agent cli internal error", "err", err)
	return status.Error(codes.Internal, "Agent CLI internal error")
}

func codeOf(k clierr.Kind) codes.Code {
	switch k {
	case clierr.Unauthenticated:
		return codes.Unauthenticated
	case clierr.Conflict:
		return codes.FailedPrecondition
	case clierr.Invalid:
		return codes.InvalidArgument
	case clierr.Limit:
		return codes.ResourceExhausted
	case clierr.TooLarge:
		return codes.OutOfRange
	default:
		return codes.Internal
	}
}

var errUnauthenticated = status.Error(codes.Unauthenticated, clierr.UnauthenticatedText)
