package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

var questionStatuses = map[string]operatorv1.QuestionStatus{
	"pending": operatorv1.QuestionStatus_QUESTION_STATUS_PENDING, "submitted": operatorv1.QuestionStatus_QUESTION_STATUS_SUBMITTED,
	"cancelled": operatorv1.QuestionStatus_QUESTION_STATUS_CANCELLED,
}

var questionCommands = []command{
	listCommand("questions", "list ask_questions forms, newest first",
		[]string{"ID", "STATUS", "AGENT", "CONVERSATION", "REQUESTER", "CREATED", "TITLE"},
		func(q *operatorv1.QuestionForm) []string {
			return []string{id(q.GetId()), word(q.GetStatus()), q.GetAgent(),
				conversationText(q.GetConversation()), q.GetRequester(), when(q.GetCreatedAt()), q.GetTitle()}
		},
		func(fs *flag.FlagSet) fetchPage[*operatorv1.QuestionForm] {
			status := newChoice(questionStatuses)
			fs.Var(status, "status", "only forms in this state: "+status.names())
			requester := fs.String("requester", "", "only forms for this requester")
			var conv conversationFlags
			conv.register(fs)
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.QuestionForm, string, error) {
				filter, err := conv.filter()
				if err != nil {
					return nil, "", err
				}
				resp, err := c.api.ListQuestions(ctx, &operatorv1.ListQuestionsRequest{Status: status.value, Requester: *requester, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetQuestions(), resp.GetNextPageToken(), err
			}
		}),
	recordCommand("questions", "show", "question id", "show one form: its questions, draft and answers", showQuestion, noFlags(getQuestion)),
	answerCommand("draft", "save answers as the form's draft; it stays pending", false),
	answerCommand("submit", "submit the form's answers, once", true),
	recordCommand("questions", "cancel", "question id", "cancel a pending form", showQuestion,
		noFlags(func(ctx context.Context, c *cli, n uint64) (*operatorv1.QuestionForm, error) {
			resp, err := c.api.CancelQuestion(ctx, &operatorv1.CancelQuestionRequest{QuestionId: n})
			return resp.GetQuestion(), err
		})),
}

// answerCommand saves a draft or submits, with the answers as JSON (the object the form's
// questions_json describes) from --answers: the JSON itself, @FILE, or - for stdin. The
// form's current revision is read first unless --revision names the one the answers are for.
func answerCommand(verb, summary string, submit bool) command {
	return recordCommand("questions", verb, "question id", summary, showQuestion,
		func(fs *flag.FlagSet) func(context.Context, *cli, uint64) (*operatorv1.QuestionForm, error) {
			answers := fs.String("answers", "", `the answers as JSON, {"<question id>":{"values":["<option value>"]}}, or @FILE, or - for stdin (required)`)
			revision := fs.Uint64("revision", 0, "the form revision the answers are for (default: the current one)")
			return func(ctx context.Context, c *cli, n uint64) (*operatorv1.QuestionForm, error) {
				body, err := readAnswers(*answers, c.stdin)
				if err != nil {
					return nil, err
				}
				rev := *revision
				if rev == 0 {
					q, err := getQuestion(ctx, c, n)
					if err != nil {
						return nil, err
					}
					rev = q.GetRevision()
				}
				if submit {
					resp, err := c.api.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: n, Revision: rev, AnswersJson: body})
					return resp.GetQuestion(), err
				}
				resp, err := c.api.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: n, Revision: rev, AnswersJson: body})
				return resp.GetQuestion(), err
			}
		})
}

func readAnswers(arg string, stdin io.Reader) (string, error) {
	switch {
	case arg == "":
		return "", usageError("--answers is required")
	case arg == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
		return strings.TrimSpace(string(b)), err
	case strings.HasPrefix(arg, "@"):
		b, err := os.ReadFile(arg[1:])
		return strings.TrimSpace(string(b)), err
	}
	return arg, nil
}

func getQuestion(ctx context.Context, c *cli, n uint64) (*operatorv1.QuestionForm, error) {
	resp, err := c.api.GetQuestion(ctx, &operatorv1.GetQuestionRequest{QuestionId: n})
	return resp.GetQuestion(), err
}

func showQuestion(c *cli, q *operatorv1.QuestionForm) error {
	if c.global.json {
		return c.emit(q)
	}
	return c.fields("id", id(q.GetId()), "status", word(q.GetStatus()), "agent", q.GetAgent(),
		"conversation", conversationText(q.GetConversation()), "requester", q.GetRequester(), "title", q.GetTitle(),
		"revision", id(q.GetRevision()), "questions", q.GetQuestionsJson(), "draft", q.GetDraftJson(), "answers", q.GetAnswersJson(),
		"created", at(q.GetCreatedAt()), "submitted", at(q.GetSubmittedAt()), "cancelled by", q.GetCancelledBy())
}
