package operator_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/response"
)

// TestConversationFilterBounds: a list's conversation filter follows the rule a response's
// conversation follows: the longest channel and thread pass, one byte more and control
// characters are INVALID_ARGUMENT, on every list that filters by conversation.
func TestConversationFilterBounds(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)
	longest := strings.Repeat("c", response.MaxIdentityLength)
	lists := map[string]func(*conversationv1.Conversation) error{
		"Jobs": func(c *conversationv1.Conversation) error {
			_, err := e.member.ListJobs(ctx, &operatorv1.ListJobsRequest{Conversation: c})
			return err
		},
		"Questions": func(c *conversationv1.Conversation) error {
			_, err := e.member.ListQuestions(ctx, &operatorv1.ListQuestionsRequest{Conversation: c})
			return err
		},
		"Progress": func(c *conversationv1.Conversation) error {
			_, err := e.member.ListProgress(ctx, &operatorv1.ListProgressRequest{Conversation: c})
			return err
		},
	}
	for name, list := range lists {
		t.Run(name, func(t *testing.T) {
			if err := list(&conversationv1.Conversation{Channel: longest, Thread: longest}); err != nil {
				t.Errorf("the longest channel and thread: %v", err)
			}
			for what, c := range map[string]*conversationv1.Conversation{
				"ChannelOneOver": {Channel: longest + "c"},
				"ThreadOneOver":  {Channel: "c", Thread: longest + "t"},
				"NULChannel":     {Channel: "a\x00b"},
				"NewlineThread":  {Channel: "c", Thread: "a\nb"},
			} {
				wantCode(t, what, list(c), codes.InvalidArgument)
			}
		})
	}
}
