package operator_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// wantRefusedNaming checks that a decision a request does not take is INVALID_ARGUMENT with a
// message naming the decisions it does take: one Decision enum serves every Decide method, so
// the message is how a caller learns which of its values this one accepts.
func wantRefusedNaming(t *testing.T, what string, err error, accepted string) {
	t.Helper()
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), accepted) {
		t.Errorf("%s: err = %v, want InvalidArgument naming %q", what, err, accepted)
	}
}
