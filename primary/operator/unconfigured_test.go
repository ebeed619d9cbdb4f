package operator_test

import (
	"context"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

func TestInteractionSourcesNotConfiguredAreUnavailable(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t, false)
	for name, call := range map[string]func() error{
		"ListPrompts": func() error { _, err := e.member.ListPrompts(ctx, &operatorv1.ListPromptsRequest{}); return err },
		"GetPrompt":   func() error { _, err := e.member.GetPrompt(ctx, &operatorv1.GetPromptRequest{PromptId: 1}); return err },
		"DecidePrompt": func() error {
			_, err := e.member.DecidePrompt(ctx, &operatorv1.DecidePromptRequest{PromptId: 1, Decision: promptDeny})
			return err
		},
		"ListQuestions": func() error { _, err := e.member.ListQuestions(ctx, &operatorv1.ListQuestionsRequest{}); return err },
		"GetQuestion": func() error {
			_, err := e.member.GetQuestion(ctx, &operatorv1.GetQuestionRequest{QuestionId: 1})
			return err
		},
		"SaveQuestionDraft": func() error {
			_, err := e.member.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: 1, Revision: 1})
			return err
		},
		"SubmitQuestionAnswers": func() error {
			_, err := e.member.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: 1, Revision: 1})
			return err
		},
		"CancelQuestion": func() error {
			_, err := e.member.CancelQuestion(ctx, &operatorv1.CancelQuestionRequest{QuestionId: 1})
			return err
		},
		"ListProgress":  func() error { _, err := e.member.ListProgress(ctx, &operatorv1.ListProgressRequest{}); return err },
		"ListResponses": func() error { _, err := e.member.ListResponses(ctx, &operatorv1.ListResponsesRequest{}); return err },
		"WatchEvents": func() error {
			stream, err := e.member.WatchEvents(ctx, &operatorv1.WatchEventsRequest{})
			if err == nil {
				_, err = stream.Recv()
			}
			return err
		},
	} {
		wantCode(t, name, call(), codes.Unavailable)
	}
	if r := e.do(t, http.MethodGet, "/v1/operator/events", e.memberToken, ""); r.code != http.StatusServiceUnavailable {
		t.Fatalf("GET events without a feed = %d %s, want 503", r.code, r.body)
	}
}
