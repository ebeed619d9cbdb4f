package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/test/bufconn"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// serviceAPI is OperatorService over a real primary's interaction service, responses and feed,
// behind the real authenticator, on its own bufconn.
type serviceAPI struct {
	env   *testenv.Env
	admin operatorv1.OperatorServiceClient
	lis   *bufconn.Listener
}

func startServiceAPI(t *testing.T) *serviceAPI {
	t.Helper()
	env := testenv.Start(t)
	p := env.Primary
	cfg := primaryEngines(env)
	cfg.Prompts = p.Internals().Interaction.Prompts
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	srv := newServer(t, cfg)
	auth := operator.NewAuthenticator(p.Internals().Store)
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(faultgrpc.UnaryServerInterceptor(nil), auth.UnaryInterceptor()), grpc.ChainStreamInterceptor(faultgrpc.StreamServerInterceptor(nil), auth.StreamInterceptor()))
	operatorv1.RegisterOperatorServiceServer(gs, srv)
	lis := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(func() { srv.Close(); gs.Stop() })
	return &serviceAPI{env: env, lis: lis, admin: operatorv1.NewOperatorServiceClient(dialBufconn(t, lis, adminToken(t, env)))}
}

// tool is the Bash command that calls interaction.<function> with args.
func tool(function, args string) string {
	return "mindroom-agent tools call interaction." + function + " '" + args + "'"
}

// bashOutcome is how a command run by runBash ended.
type bashOutcome struct {
	stdout string
	exit   int32
	err    error
}

// runBash runs command in response id and returns its standard output and exit code; unlike
// Env.RunBash it may run outside the test's goroutine.
func runBash(ctx context.Context, env *testenv.Env, id, bashCallID, command string) bashOutcome {
	stream, err := env.Runtime.RunBash(ctx, &responsev1.RunBashRequest{ResponseId: id, BashCallId: bashCallID, Command: command})
	if err != nil {
		return bashOutcome{err: err}
	}
	var out bashOutcome
	var stdout strings.Builder
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			out.stdout = stdout.String()
			return out
		}
		if err != nil {
			return bashOutcome{err: err}
		}
		switch ev := msg.GetEvent().(type) {
		case *responsev1.RunBashResponse_Output:
			if ev.Output.GetStream() == responsev1.OutputStream_OUTPUT_STREAM_STDOUT {
				stdout.Write(ev.Output.GetData())
			}
		case *responsev1.RunBashResponse_Result:
			out.exit = ev.Result.GetExitCode()
		}
	}
}

// nextEvent returns the next event of kind on stream, skipping others.
func nextEvent(t *testing.T, stream grpc.ServerStreamingClient[operatorv1.WatchEventsResponse], kind string) *operatorv1.Event {
	t.Helper()
	for {
		if ev := recvEvent(t, stream); ev.GetKind() == kind {
			return ev
		}
	}
}

func TestThroughTheInteractionService(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := startServiceAPI(t)
	feed := watch(ctx, t, a.admin)

	t.Run("ApprovalRequestDecidedByAnOperatorAnswersTheWaitingCall", func(t *testing.T) {
		id := a.env.Open(t)
		done := make(chan bashOutcome, 1)
		go func() {
			done <- runBash(ctx, a.env, id, "ask-1", tool("request_approval", `{"details":"Deploy v2 to production","title":"Deploy?"}`))
		}()
		created := nextEvent(t, feed, "prompt.created")
		list, err := a.admin.ListPrompts(ctx, &operatorv1.ListPromptsRequest{Status: operatorv1.PromptStatus_PROMPT_STATUS_PENDING})
		if err != nil || len(list.GetPrompts()) != 1 || list.GetPrompts()[0].GetDetails() != "Deploy v2 to production" ||
			list.GetPrompts()[0].GetResponseId() != id || created.GetSubject() != store.PromptSubject(int64(list.GetPrompts()[0].GetId())) {
			t.Fatalf("pending prompts = %v, %v (event %v)", list, err, created)
		}
		// The waiting call shows on its response's receipt.
		responses, err := a.admin.ListResponses(ctx, &operatorv1.ListResponsesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		waiting := findResponse(t, responses.GetResponses(), id).GetReceipts()
		if len(waiting) != 1 || waiting[0].GetFunction() != "request_approval" || waiting[0].GetStatus() != operatorv1.CallStatus_CALL_STATUS_WAITING ||
			waiting[0].GetParentBashCallId() != "ask-1" {
			t.Fatalf("receipts of the asking response = %v", waiting)
		}
		decided, err := a.admin.DecidePrompt(ctx, decidePrompt(int64(list.GetPrompts()[0].GetId()), promptApprove, ""))
		if err != nil || decided.GetPrompt().GetStatus() != operatorv1.PromptStatus_PROMPT_STATUS_APPROVED {
			t.Fatalf("DecidePrompt = %v, %v", decided, err)
		}
		run := <-done
		if run.err != nil || run.exit != 0 || !strings.Contains(run.stdout, `\"approved\":true`) || !strings.Contains(run.stdout, `\"decided_by\":\"admin\"`) {
			t.Fatalf("request_approval answered %q (exit %d, %v)", run.stdout, run.exit, run.err)
		}
		_, err = a.admin.DecidePrompt(ctx, decidePrompt(int64(list.GetPrompts()[0].GetId()), promptDeny, ""))
		wantCode(t, "decide again", err, codes.Aborted)
	})

	t.Run("QuestionsAnsweredByTheRequesterOnly", func(t *testing.T) {
		id := a.env.Open(t, func(r *responsev1.OpenResponseRequest) {
			r.Origin = responsev1.Origin_ORIGIN_FOREGROUND
			r.Flags = []string{response.FlagRequesterTrusted}
		})
		ask := `{"title":"Release","questions":[{"id":"env","prompt":"Where to?","type":"single","options":[{"label":"Staging","value":"staging"},{"label":"Production","value":"prod"}]}]}`
		if run := a.env.RunBash(t, id, "ask-2", tool("ask_questions", ask)); run.Result.GetExitCode() != 0 {
			t.Fatalf("ask_questions: %q %q", run.Stdout, run.Stderr)
		}
		nextEvent(t, feed, interaction.KindQuestionCreated)
		list, err := a.admin.ListQuestions(ctx, &operatorv1.ListQuestionsRequest{Requester: "@alice:example.org", Status: operatorv1.QuestionStatus_QUESTION_STATUS_PENDING})
		if err != nil || len(list.GetQuestions()) != 1 || list.GetQuestions()[0].GetTitle() != "Release" {
			t.Fatalf("pending questions = %v, %v", list, err)
		}
		q := list.GetQuestions()[0]
		answers := `{"env":{"values":["prod"]}}`
		_, err = a.admin.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: q.GetId(), Revision: q.GetRevision(), AnswersJson: answers})
		wantCode(t, "the admin answers alice's questions", err, codes.PermissionDenied)

		alice := operatorv1.NewOperatorServiceClient(dialBufconn(t, a.lis, addOperator(t, a.env, "@alice:example.org", store.RoleMember)))
		_, err = alice.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: q.GetId(), Revision: q.GetRevision(), AnswersJson: `{"env":{"values":["moon"]}}`})
		wantCode(t, "an unknown option", err, codes.InvalidArgument)
		draft, err := alice.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: q.GetId(), Revision: q.GetRevision(), AnswersJson: answers})
		if err != nil || draft.GetQuestion().GetRevision() <= q.GetRevision() {
			t.Fatalf("SaveQuestionDraft = %v, %v", draft, err)
		}
		_, err = alice.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: q.GetId(), Revision: q.GetRevision(), AnswersJson: answers})
		wantCode(t, "submit on the stale revision", err, codes.Aborted)
		done, err := alice.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: q.GetId(), Revision: draft.GetQuestion().GetRevision(), AnswersJson: answers})
		if err != nil || done.GetQuestion().GetStatus() != operatorv1.QuestionStatus_QUESTION_STATUS_SUBMITTED {
			t.Fatalf("SubmitQuestionAnswers = %v, %v", done, err)
		}
		var got map[string]struct{ Values []string }
		if err := json.Unmarshal([]byte(done.GetQuestion().GetAnswersJson()), &got); err != nil || len(got["env"].Values) != 1 || got["env"].Values[0] != "prod" {
			t.Fatalf("answers_json %q (%v)", done.GetQuestion().GetAnswersJson(), err)
		}
		nextEvent(t, feed, interaction.KindQuestionSubmitted)
	})

	t.Run("ProgressReportedByAResponseIsListed", func(t *testing.T) {
		id := a.env.Open(t, func(r *responsev1.OpenResponseRequest) { r.Flags = []string{response.FlagProgressReport} })
		report := `{"title":"Ship v2","steps":[{"id":"build","title":"Build","status":"complete"},{"id":"deploy","title":"Deploy","status":"in_progress"}]}`
		if run := a.env.RunBash(t, id, "report-1", tool("report_progress", report)); run.Result.GetExitCode() != 0 {
			t.Fatalf("report_progress: %q %q", run.Stdout, run.Stderr)
		}
		ev := nextEvent(t, feed, interaction.KindProgressUpdated)
		list, err := a.admin.ListProgress(ctx, &operatorv1.ListProgressRequest{ResponseId: id})
		if err != nil || len(list.GetSnapshots()) != 1 {
			t.Fatalf("ListProgress = %v, %v", list, err)
		}
		s := list.GetSnapshots()[0]
		var steps []struct{ ID, Status string }
		if err := json.Unmarshal([]byte(s.GetStepsJson()), &steps); err != nil || len(steps) != 2 || steps[1].ID != "deploy" ||
			steps[1].Status != "in_progress" || s.GetTitle() != "Ship v2" || s.GetRequester() != "@alice:example.org" ||
			!strings.Contains(ev.GetDataJson(), "Ship v2") {
			t.Fatalf("snapshot %v (%v), event %v", s, err, ev)
		}
	})
}
