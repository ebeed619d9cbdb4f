package enumcheck

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

// TestCheck: every declared number passes; 99 is refused, naming its field.
func TestCheck(t *testing.T) {
	for n := range responsev1.Origin_name {
		if err := Check(&responsev1.OpenResponseRequest{Origin: responsev1.Origin(n)}); err != nil {
			t.Errorf("declared origin %d: %v", n, err)
		}
	}
	for name, tc := range map[string]struct {
		err   error
		field string
	}{
		"OriginNinetyNineIsRefused":    {Check(&responsev1.OpenResponseRequest{Origin: 99}), "origin"},
		"ShellModeNinetyNineIsRefused": {Check(&responsev1.OpenResponseRequest{ShellMode: 99}), "shell_mode"},
		"StatusFilterNinetyNineIsRefused": {Check(&operatorv1.ListJobsRequest{Status: 99,
			Conversation: &conversationv1.Conversation{Channel: "c"}}), "status"},
	} {
		t.Run(name, func(t *testing.T) {
			if status.Code(tc.err) != codes.InvalidArgument || !strings.Contains(tc.err.Error(), tc.field) {
				t.Errorf("%v, want INVALID_ARGUMENT naming %s", tc.err, tc.field)
			}
		})
	}
}
