package main

import (
	"context"
	"flag"
	"fmt"
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
	{noun: "questions", verb: "ls", summary: "list ask_questions forms, newest first", setup: func(fs *flag.FlagSet) runner {
		status := newChoice(questionStatuses)
		fs.Var(status, "status", "only forms in this state: "+status.names())
		requester := fs.String("requester", "", "only forms for this requester")
		var conv conversationFlags
		conv.register(fs)
		var p page
		p.register(fs)
		return online(func(ctx context.Context, c *cli, _ []string) error {
			filter, err := conv.filter()
			if err != nil {
				return err
			}
			list, err := collect(ctx, p, func(ctx context.Context, size uint32, token string) ([]*operatorv1.QuestionForm, string, error) {
				ctx, cancel := c.call(ctx)
				defer cancel()
				resp, err := c.api.ListQuestions(ctx, &operatorv1.ListQuestionsRequest{Status: status.value, Requester: *requester, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetQuestions(), resp.GetNextPageToken(), err
			})
			if err != nil {
				return err
			}
			if c.global.json {
				return emitAll(c, list)
			}
			rows := make([][]string, 0, len(list))
			for _, q := range list {
				rows = append(rows, []string{id(q.GetId()), enumName(q.GetStatus().String(), "QUESTION_STATUS_"), q.GetAgent(),
					conversationText(q.GetConversation()), q.GetRequester(), when(q.GetCreatedAt()), q.GetTitle()})
			}
			return c.table([]string{"ID", "STATUS", "AGENT", "CONVERSATION", "REQUESTER", "CREATED", "TITLE"}, rows)
		})
	}},
	{noun: "questions", verb: "show", args: arity{"ID"}, summary: "show one form: its questions, draft and answers", setup: func(fs *flag.FlagSet) runner {
		return online(func(ctx context.Context, c *cli, args []string) error {
			q, err := getQuestion(ctx, c, args[0])
			if err != nil {
				return err
			}
			return showQuestion(c, q)
		})
	}},
	answerCommand("draft", "save answers as the form's draft; it stays pending", false),
	answerCommand("submit", "submit the form's answers, once", true),
	{noun: "questions", verb: "cancel", args: arity{"ID"}, summary: "cancel a pending form", setup: func(fs *flag.FlagSet) runner {
		return online(func(ctx context.Context, c *cli, args []string) error {
			n, err := parseID("question id", args[0])
			if err != nil {
				return err
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.CancelQuestion(ctx, &operatorv1.CancelQuestionRequest{QuestionId: n})
			if err != nil {
				return err
			}
			return showQuestion(c, resp.GetQuestion())
		})
	}},
}

// answerCommand saves a draft or submits, with the answers as JSON (the object the form's
// questions_json describes) from --answers: the JSON itself, @FILE, or - for stdin. The
// form's current revision is read first unless --revision names the one the answers are for.
func answerCommand(verb, summary string, submit bool) command {
	return command{noun: "questions", verb: verb, args: arity{"ID"}, summary: summary, setup: func(fs *flag.FlagSet) runner {
		answers := fs.String("answers", "", `the answers as JSON, {"<question id>":{"values":["<option value>"]}}, or @FILE, or - for stdin (required)`)
		revision := fs.Uint64("revision", 0, "the form revision the answers are for (default: the current one)")
		return online(func(ctx context.Context, c *cli, args []string) error {
			n, err := parseID("question id", args[0])
			if err != nil {
				return err
			}
			body, err := readAnswers(*answers, c.stdin)
			if err != nil {
				return err
			}
			rev := *revision
			if rev == 0 {
				q, err := getQuestion(ctx, c, args[0])
				if err != nil {
					return err
				}
				rev = q.GetRevision()
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			var q *operatorv1.QuestionForm
			if submit {
				resp, err := c.api.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: n, Revision: rev, AnswersJson: body})
				if err != nil {
					return err
				}
				q = resp.GetQuestion()
			} else {
				resp, err := c.api.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: n, Revision: rev, AnswersJson: body})
				if err != nil {
					return err
				}
				q = resp.GetQuestion()
			}
			return showQuestion(c, q)
		})
	}}
}

func readAnswers(arg string, stdin io.Reader) (string, error) {
	switch {
	case arg == "":
		return "", fmt.Errorf("%w: --answers is required", errUsage)
	case arg == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
		return strings.TrimSpace(string(b)), err
	case strings.HasPrefix(arg, "@"):
		b, err := os.ReadFile(arg[1:])
		return strings.TrimSpace(string(b)), err
	}
	return arg, nil
}

func getQuestion(ctx context.Context, c *cli, arg string) (*operatorv1.QuestionForm, error) {
	n, err := parseID("question id", arg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.call(ctx)
	defer cancel()
	resp, err := c.api.GetQuestion(ctx, &operatorv1.GetQuestionRequest{QuestionId: n})
	return resp.GetQuestion(), err
}

func showQuestion(c *cli, q *operatorv1.QuestionForm) error {
	if c.global.json {
		return c.emit(q)
	}
	return c.fields("id", id(q.GetId()), "status", enumName(q.GetStatus().String(), "QUESTION_STATUS_"), "agent", q.GetAgent(),
		"conversation", conversationText(q.GetConversation()), "requester", q.GetRequester(), "title", q.GetTitle(),
		"revision", id(q.GetRevision()), "questions", q.GetQuestionsJson(), "draft", q.GetDraftJson(), "answers", q.GetAnswersJson(),
		"created", at(q.GetCreatedAt()), "submitted", at(q.GetSubmittedAt()), "cancelled by", q.GetCancelledBy())
}
