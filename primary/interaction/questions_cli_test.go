package interaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// asker is the requester of the question tests, as the operator who answers.
var asker = store.Operator{Name: stranger, Role: store.RoleMember}

// trusted opens a foreground response with a trusted requester (stranger) in thread.
func trusted(t *testing.T, env *testenv.Env, thread string, edit ...func(*responsev1.OpenResponseRequest)) string {
	t.Helper()
	return openAs(t, env, stranger, thread, append([]func(*responsev1.OpenResponseRequest){func(r *responsev1.OpenResponseRequest) {
		r.Origin = responsev1.Origin_ORIGIN_FOREGROUND
		r.Flags = []string{"requester_trusted"}
	}}, edit...)...)
}

// deployForm is an ask_questions request: a single, a multi and an optional text question.
const deployForm = `{"title":" Deploy ","questions":[` +
	`{"id":"env","prompt":"Which environment?","type":"single","options":[{"label":"Staging","value":"staging"},{"label":"Production","value":"prod"}]},` +
	`{"id":"extras","prompt":"Which extras?","type":"multi","options":[{"label":"Logs","value":"logs"},{"label":"Metrics","value":"metrics"}]},` +
	`{"id":"notes","prompt":"Anything else?","type":"text","required":false}]}`

// askedID checks an ask_questions acknowledgement and returns its request id.
func askedID(t *testing.T, r callResult) int64 {
	t.Helper()
	out := accepted(t, r)
	if out["status"] != "pending" {
		t.Fatalf("want status pending; got %v", out)
	}
	if msg, _ := out["message"].(string); !strings.Contains(msg, "continue only with work that does not depend on the answers") {
		t.Errorf("acknowledgement %q does not tell the agent to continue only with independent work", msg)
	}
	return idOf(t, out, "request_id")
}

func kinds(evs []events.Event) []string {
	out := []string{}
	for _, ev := range evs {
		out = append(out, ev.Kind+" "+ev.Subject)
	}
	return out
}

// TestAskQuestionsThroughTheCLI asks from real Bash with the real client, then answers,
// submits and cancels through the toolkit's Go API as the operator API does.
func TestAskQuestionsThroughTheCLI(t *testing.T) {
	env := start(t)
	ctx := context.Background()
	api := env.Primary.Internals().Interaction.Questions
	const thread = "$questions"
	resp := trusted(t, env, thread)
	feed, stop := env.Primary.Internals().Events.Subscribe(0)
	defer stop()

	t.Run("OfferedOnlyToForegroundResponsesOfTrustedRequestersInAThread", func(t *testing.T) {
		others := map[string]string{
			"untrusted":    openAs(t, env, stranger, thread),
			"background":   trusted(t, env, thread, func(r *responsev1.OpenResponseRequest) { r.Origin = responsev1.Origin_ORIGIN_BACKGROUND }),
			"scheduled":    trusted(t, env, thread, func(r *responsev1.OpenResponseRequest) { r.Origin = responsev1.Origin_ORIGIN_SCHEDULED }),
			"mainTimeline": trusted(t, env, ""),
		}
		if !lists(t, env, resp, "ask_questions") || describeExit(t, env, resp, "ask_questions") != 0 {
			t.Error("a trusted foreground response in a thread is not offered ask_questions")
		}
		for name, id := range others {
			if lists(t, env, id, "ask_questions") {
				t.Errorf("%s response lists ask_questions", name)
			}
			if code := describeExit(t, env, id, "ask_questions"); code != 2 {
				t.Errorf("%s response describes ask_questions: exit %d, want 2", name, code)
			}
		}
		refused(t, callTool(t, env, others["background"], "interaction.ask_questions", deployForm), `Unknown function "ask_questions"`)
		if qs, _ := api.ListQuestions(ctx, store.QuestionFilter{}); len(qs) != 0 {
			t.Errorf("%d requests saved by responses not offered the tool", len(qs))
		}
	})

	var id int64
	t.Run("AskingSavesAPendingRequestAndReturnsAtOnce", func(t *testing.T) {
		published(feed)
		id = askedID(t, callTool(t, env, resp, "interaction.ask_questions", deployForm))
		q, err := api.Question(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if q.Status != store.QuestionPending || q.Requester != stranger || q.Channel != channel || q.Thread != thread ||
			q.Agent != agent || q.ResponseID != resp || q.Title != "Deploy" || q.Presentation != "auto" || q.Revision != 1 {
			t.Errorf("saved %+v", q)
		}
		var questions []store.Question
		if err := json.Unmarshal(q.Questions, &questions); err != nil || len(questions) != 3 ||
			!questions[0].Required || !questions[0].AllowCustom || questions[2].Required || len(questions[2].Options) != 0 {
			t.Errorf("questions %s (%v)", q.Questions, err)
		}
		if got := kinds(published(feed)); !reflect.DeepEqual(got, []string{"question.created question/" + itoa(id)}) {
			t.Errorf("events %q", got)
		}
	})

	t.Run("TheSameRequestAgainReturnsTheSameID", func(t *testing.T) {
		r := callTool(t, env, resp, "interaction.ask_questions", deployForm)
		if again := askedID(t, r); again != id {
			t.Fatalf("asked again: request %d, want %d", again, id)
		}
		if msg, _ := accepted(t, r)["message"].(string); !strings.Contains(msg, "already waiting") {
			t.Errorf("acknowledgement %q does not say it was already waiting", msg)
		}
		if len(published(feed)) != 0 {
			t.Error("asking again published an event")
		}
	})

	t.Run("ADifferentRequestIsRefusedNamingThePendingOne", func(t *testing.T) {
		refused(t, callTool(t, env, resp, "interaction.ask_questions", `{"title":"Other","questions":[{"id":"q","prompt":"Why?","type":"text"}]}`),
			"questions request "+itoa(id)+" is still waiting", "answered or cancelled")
	})

	t.Run("AnInvalidRequestFailsNamingTheRule", func(t *testing.T) {
		for _, c := range []struct{ args, rule string }{
			{`{"title":"T","questions":[{"id":"q","prompt":"P","type":"single","options":[` +
				`{"label":"a","value":"a"},{"label":"b","value":"b"},{"label":"c","value":"c"},{"label":"d","value":"d"},{"label":"e","value":"e"}]}]}`,
				"questions[0].options: a single question allows at most 4 options; it has 5"},
			{`{"title":"T","presentation":"message","questions":[` + strings.Repeat(`{"id":"q","prompt":"P","type":"text"},`, 4) +
				`{"id":"q","prompt":"P","type":"text"}]}`, "presentation message allows at most 4 questions"},
			{`{"title":"T","questions":[{"id":"9lives","prompt":"P","type":"text"}]}`, "questions[0].id must match"},
			{`{"title":"T","questions":[{"id":"q","prompt":"P","type":"text","hint":"h"}]}`, "Invalid tool arguments"},
		} {
			refused(t, callTool(t, env, resp, "interaction.ask_questions", c.args), c.rule)
		}
	})

	t.Run("OnlyTheRequesterAnswers", func(t *testing.T) {
		for _, by := range []store.Operator{{Name: "mia", Role: store.RoleMember}, {Name: "ada", Role: store.RoleAdmin}} {
			if _, err := api.SaveQuestionDraft(ctx, id, interaction.OperatorPerson(by), 1, json.RawMessage(`{}`)); !errors.Is(err, store.ErrForbidden) {
				t.Errorf("draft by %s: %v, want ErrForbidden", by.Name, err)
			}
			if _, err := api.SubmitQuestionAnswers(ctx, id, interaction.OperatorPerson(by), 1, json.RawMessage(`{"env":{"values":["prod"]}}`)); !errors.Is(err, store.ErrForbidden) {
				t.Errorf("submit by %s: %v, want ErrForbidden", by.Name, err)
			}
		}
		if _, err := api.CancelQuestion(ctx, id, interaction.OperatorPerson(store.Operator{Name: "mia", Role: store.RoleMember})); !errors.Is(err, store.ErrForbidden) {
			t.Errorf("cancel by another member: %v, want ErrForbidden", err)
		}
		if _, err := api.Question(ctx, 99999); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown request: %v, want ErrNotFound", err)
		}
	})

	t.Run("DraftsAreSavedUnderARevision", func(t *testing.T) {
		published(feed)
		q, err := api.SaveQuestionDraft(ctx, id, interaction.OperatorPerson(asker), 1, json.RawMessage(`{"extras":{"values":["metrics","logs"]}}`))
		if err != nil {
			t.Fatal(err)
		}
		if q.Revision != 2 || string(q.Draft) != `{"extras":{"values":["logs","metrics"],"custom":""}}` {
			t.Errorf("after a draft: revision %d, draft %s", q.Revision, q.Draft)
		}
		if _, err := api.SaveQuestionDraft(ctx, id, interaction.OperatorPerson(asker), 1, json.RawMessage(`{}`)); !errors.Is(err, store.ErrConflict) {
			t.Errorf("stale draft: %v, want ErrConflict", err)
		}
		_, err = api.SaveQuestionDraft(ctx, id, interaction.OperatorPerson(asker), 2, json.RawMessage(`{"env":{"values":["prod"],"custom":"qa"}}`))
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "a custom answer replaces the choice of single question env") {
			t.Errorf("invalid draft: %v, want ErrInvalid naming the rule", err)
		}
		if got := kinds(published(feed)); !reflect.DeepEqual(got, []string{"question.updated question/" + itoa(id)}) {
			t.Errorf("events %q", got)
		}
	})

	t.Run("SubmitNeedsEveryRequiredQuestion", func(t *testing.T) {
		_, err := api.SubmitQuestionAnswers(ctx, id, interaction.OperatorPerson(asker), 2, json.RawMessage(`{"env":{"values":["prod"]}}`))
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "question extras") {
			t.Errorf("incomplete submit: %v, want ErrInvalid naming extras", err)
		}
	})

	t.Run("SubmittingTellsTheConversationExactlyOnce", func(t *testing.T) {
		published(feed)
		answers := json.RawMessage(`{"env":{"custom":"the qa cluster"},"extras":{"values":["logs"],"custom":"traces"}}`)
		q, err := api.SubmitQuestionAnswers(ctx, id, interaction.OperatorPerson(asker), 2, answers)
		if err != nil {
			t.Fatal(err)
		}
		if q.Status != store.QuestionSubmitted || q.SubmittedAt.IsZero() || q.Revision != 3 {
			t.Errorf("after submit %+v", q)
		}
		if _, err := api.SubmitQuestionAnswers(ctx, id, interaction.OperatorPerson(asker), 3, answers); !errors.Is(err, store.ErrConflict) {
			t.Errorf("second submit: %v, want ErrConflict", err)
		}
		if _, err := api.CancelQuestion(ctx, id, interaction.OperatorPerson(asker)); !errors.Is(err, store.ErrConflict) {
			t.Errorf("cancel after submit: %v, want ErrConflict", err)
		}
		cs := continuationsWithKey(t, env, "questions:"+itoa(id))
		if len(cs) != 1 {
			t.Fatalf("%d continuations, want 1", len(cs))
		}
		c := cs[0]
		for _, want := range []string{"Which environment?\nAnswer: in their own words: the qa cluster",
			"Which extras?\nAnswer: Logs; in their own words: traces", "Anything else?\nAnswer: (skipped)"} {
			if !strings.Contains(c.Text, want) {
				t.Errorf("continuation %q lacks %q", c.Text, want)
			}
		}
		if c.Channel != channel || c.Thread != thread || c.Post {
			t.Errorf("continuation %+v", c)
		}
		if got := kinds(published(feed)); !reflect.DeepEqual(got, []string{"question.submitted question/" + itoa(id)}) {
			t.Errorf("events %q", got)
		}
	})

	t.Run("AfterSubmissionANewRequestCanBeAskedAndAnAdminCancelsIt", func(t *testing.T) {
		next := askedID(t, callTool(t, env, resp, "interaction.ask_questions", `{"title":"Other","questions":[{"id":"q","prompt":"Why?","type":"text"}]}`))
		if next == id {
			t.Fatalf("a new request got the submitted one's id %d", id)
		}
		published(feed)
		q, err := api.CancelQuestion(ctx, next, interaction.OperatorPerson(store.Operator{Name: "ada", Role: store.RoleAdmin}))
		if err != nil || q.Status != store.QuestionCancelled || q.CancelledBy != "ada" {
			t.Fatalf("admin cancel: %+v, %v", q, err)
		}
		if got := kinds(published(feed)); !reflect.DeepEqual(got, []string{"question.cancelled question/" + itoa(next)}) {
			t.Errorf("events %q", got)
		}
	})

	t.Run("TheRequesterCancelsTheirOwn", func(t *testing.T) {
		next := askedID(t, callTool(t, env, resp, "interaction.ask_questions", `{"title":"Third","questions":[{"id":"q","prompt":"Why?","type":"text"}]}`))
		if q, err := api.CancelQuestion(ctx, next, interaction.OperatorPerson(asker)); err != nil || q.CancelledBy != stranger {
			t.Fatalf("requester cancel: %+v, %v", q, err)
		}
	})

	t.Run("StoppingTheThreadCancelsItsPendingRequests", func(t *testing.T) {
		next := askedID(t, callTool(t, env, resp, "interaction.ask_questions", `{"title":"Fourth","questions":[{"id":"q","prompt":"Why?","type":"text"}]}`))
		published(feed)
		qs, err := api.CancelThreadQuestions(ctx, channel, thread)
		if err != nil || len(qs) != 1 || qs[0].ID != next || qs[0].Status != store.QuestionCancelled {
			t.Fatalf("stop: %+v, %v", qs, err)
		}
		if got := kinds(published(feed)); !reflect.DeepEqual(got, []string{"question.cancelled question/" + itoa(next)}) {
			t.Errorf("events %q", got)
		}
		if pending, _ := api.ListQuestions(ctx, store.QuestionFilter{Status: store.QuestionPending}); len(pending) != 0 {
			t.Errorf("%d requests still pending", len(pending))
		}
	})
}

// TestQuestionsSurviveARestart asks and saves a draft on one primary, stops it, and reads
// the draft and submits on another primary on the same state: the submission is accepted
// once and tells the conversation once.
func TestQuestionsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	const thread = "$restart"
	draft := json.RawMessage(`{"env":{"values":["staging"]}}`)
	var id int64
	t.Run("AskAndSaveADraft", func(t *testing.T) {
		env := start(t, testenv.WithStateDir(dir))
		id = askedID(t, callTool(t, env, trusted(t, env, thread), "interaction.ask_questions", deployForm))
		if _, err := env.Primary.Internals().Interaction.Questions.SaveQuestionDraft(ctx, id, interaction.OperatorPerson(asker), 1, draft); err != nil {
			t.Fatal(err)
		}
	})
	if id == 0 {
		t.Fatal("nothing was asked")
	}
	t.Run("ReadTheDraftAndSubmitOnce", func(t *testing.T) {
		env := start(t, testenv.WithStateDir(dir))
		api := env.Primary.Internals().Interaction.Questions
		q, err := api.Question(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if q.Status != store.QuestionPending || q.Revision != 2 || string(q.Draft) != `{"env":{"values":["staging"],"custom":""}}` {
			t.Fatalf("after the restart: %+v", q)
		}
		answers := json.RawMessage(`{"env":{"values":["staging"]},"extras":{"values":["metrics"]}}`)
		if _, err := api.SubmitQuestionAnswers(ctx, id, interaction.OperatorPerson(asker), q.Revision, answers); err != nil {
			t.Fatal(err)
		}
		if _, err := api.SubmitQuestionAnswers(ctx, id, interaction.OperatorPerson(asker), q.Revision+1, answers); !errors.Is(err, store.ErrConflict) {
			t.Errorf("second submit: %v, want ErrConflict", err)
		}
		cs := continuationsWithKey(t, env, "questions:"+itoa(id))
		if len(cs) != 1 || !strings.Contains(cs[0].Text, "Which environment?\nAnswer: Staging") || cs[0].Thread != thread {
			t.Fatalf("continuations %+v, want one with the answers", cs)
		}
	})
}
