package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/store"
)

// askQuestions saves a pending form asking requester in room/<thread>.
func askQuestions(t *testing.T, e *apiEnv, thread, requester string) store.QuestionRequest {
	t.Helper()
	q, created, err := e.store.SaveQuestionRequest(context.Background(), store.NewQuestionRequest{
		Channel: "room", Thread: thread, Requester: requester, Agent: "code", ResponseID: "resp-1", Title: "Release plan",
		Presentation: "modal",
		Questions:    json.RawMessage(`[{"id":"env","prompt":"Where?","type":"single","options":[{"label":"Staging","value":"staging"}],"required":true,"allowCustom":true}]`),
	})
	if err != nil || !created {
		t.Fatalf("SaveQuestionRequest = %v, created %v", err, created)
	}
	return q
}

const stagingAnswer = `{"env":{"values":["staging"],"custom":""}}`

func TestQuestionsAPI(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)

	t.Run("AnyoneReadsAFormAsAsked", func(t *testing.T) {
		q := askQuestions(t, e, "t1", "mia")
		got, err := e.admin.GetQuestion(ctx, &operatorv1.GetQuestionRequest{QuestionId: uint64(q.ID)})
		if err != nil {
			t.Fatal(err)
		}
		g := got.GetQuestion()
		var questions []map[string]any
		if err := json.Unmarshal([]byte(g.GetQuestionsJson()), &questions); err != nil || len(questions) != 1 || questions[0]["id"] != "env" {
			t.Fatalf("questions_json %q (%v)", g.GetQuestionsJson(), err)
		}
		if g.GetId() != uint64(q.ID) || g.GetStatus() != operatorv1.QuestionStatus_QUESTION_STATUS_PENDING ||
			g.GetConversation().GetThread() != "t1" || g.GetRequester() != "mia" || g.GetAgent() != "code" ||
			g.GetResponseId() != "resp-1" || g.GetTitle() != "Release plan" ||
			g.GetPresentation() != operatorv1.QuestionPresentation_QUESTION_PRESENTATION_MODAL || g.GetRevision() != 1 ||
			g.GetDraftJson() != "{}" || g.GetAnswersJson() != "" || g.GetCreatedAt() == nil || g.GetSubmittedAt() != nil {
			t.Fatalf("GetQuestion = %v", g)
		}
	})

	t.Run("MissingFormIsNotFoundWhateverTheRevision", func(t *testing.T) {
		const missing = 1 << 40
		for _, rev := range []uint64{0, 1} {
			_, err := e.member.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: missing, Revision: rev, AnswersJson: "{}"})
			wantCode(t, "draft on a missing form", err, codes.NotFound)
			_, err = e.member.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: missing, Revision: rev, AnswersJson: "{}"})
			wantCode(t, "submit on a missing form", err, codes.NotFound)
		}
	})

	t.Run("RequesterSavesDraftsByRevisionThenSubmitsOnce", func(t *testing.T) {
		q := askQuestions(t, e, "t2", "mia")
		saved, err := e.member.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: uint64(q.ID), Revision: 1, AnswersJson: stagingAnswer})
		if err != nil {
			t.Fatal(err)
		}
		if s := saved.GetQuestion(); s.GetRevision() != 2 || s.GetDraftJson() != stagingAnswer || s.GetStatus() != operatorv1.QuestionStatus_QUESTION_STATUS_PENDING {
			t.Fatalf("after a draft = %v", s)
		}
		_, err = e.member.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: uint64(q.ID), Revision: 1, AnswersJson: "{}"})
		wantCode(t, "draft on a stale revision", err, codes.Aborted)
		_, err = e.member.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: uint64(q.ID), Revision: 0, AnswersJson: "{}"})
		wantCode(t, "submit on revision 0", err, codes.Aborted)

		done, err := e.member.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: uint64(q.ID), Revision: 2, AnswersJson: stagingAnswer})
		if err != nil {
			t.Fatal(err)
		}
		if d := done.GetQuestion(); d.GetStatus() != operatorv1.QuestionStatus_QUESTION_STATUS_SUBMITTED || d.GetAnswersJson() != stagingAnswer ||
			d.GetSubmittedAt() == nil {
			t.Fatalf("after submit = %v", d)
		}
		_, err = e.member.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: uint64(q.ID), Revision: done.GetQuestion().GetRevision(), AnswersJson: stagingAnswer})
		wantCode(t, "second submit", err, codes.Aborted)
		_, err = e.member.CancelQuestion(ctx, &operatorv1.CancelQuestionRequest{QuestionId: uint64(q.ID)})
		wantCode(t, "cancel after submit", err, codes.Aborted)
	})

	t.Run("OnlyTheRequesterAnswers", func(t *testing.T) {
		q := askQuestions(t, e, "t3", "mia")
		_, err := e.admin.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: uint64(q.ID), Revision: 1, AnswersJson: stagingAnswer})
		wantCode(t, "admin drafts mia's answers", err, codes.PermissionDenied)
		_, err = e.admin.SubmitQuestionAnswers(ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: uint64(q.ID), Revision: 1, AnswersJson: stagingAnswer})
		wantCode(t, "admin submits mia's answers", err, codes.PermissionDenied)
		_, err = e.member.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: uint64(q.ID), Revision: 1, AnswersJson: `["staging"]`})
		wantCode(t, "answers that are not an object", err, codes.InvalidArgument)
	})

	t.Run("TheRequesterOrAnAdminCancels", func(t *testing.T) {
		q := askQuestions(t, e, "t4", "ada")
		_, err := e.member.CancelQuestion(ctx, &operatorv1.CancelQuestionRequest{QuestionId: uint64(q.ID)})
		wantCode(t, "member cancels ada's form", err, codes.PermissionDenied)
		got, err := e.admin.CancelQuestion(ctx, &operatorv1.CancelQuestionRequest{QuestionId: uint64(q.ID)})
		if err != nil || got.GetQuestion().GetStatus() != operatorv1.QuestionStatus_QUESTION_STATUS_CANCELLED ||
			got.GetQuestion().GetCancelledBy() != "ada" || got.GetQuestion().GetCancelledAt() == nil {
			t.Fatalf("cancel = %v, %v", got, err)
		}
	})

	t.Run("UnknownFormIsNotFound", func(t *testing.T) {
		for _, id := range []uint64{0, 999, 1 << 63} {
			_, err := e.member.GetQuestion(ctx, &operatorv1.GetQuestionRequest{QuestionId: id})
			wantCode(t, fmt.Sprintf("GetQuestion %d", id), err, codes.NotFound)
			_, err = e.member.SaveQuestionDraft(ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: id, Revision: 1, AnswersJson: "{}"})
			wantCode(t, fmt.Sprintf("SaveQuestionDraft %d", id), err, codes.NotFound)
			_, err = e.member.CancelQuestion(ctx, &operatorv1.CancelQuestionRequest{QuestionId: id})
			wantCode(t, fmt.Sprintf("CancelQuestion %d", id), err, codes.NotFound)
		}
	})

	t.Run("ListQuestionsFilters", func(t *testing.T) {
		all, err := e.member.ListQuestions(ctx, &operatorv1.ListQuestionsRequest{})
		if err != nil || len(all.GetQuestions()) != 4 || all.GetQuestions()[0].GetId() < all.GetQuestions()[3].GetId() {
			t.Fatalf("ListQuestions = %v, %v; want four, newest first", all, err)
		}
		for _, c := range []struct {
			name string
			req  *operatorv1.ListQuestionsRequest
			want string // the thread of the one match
		}{
			{"submitted", &operatorv1.ListQuestionsRequest{Status: operatorv1.QuestionStatus_QUESTION_STATUS_SUBMITTED}, "t2"},
			{"asking ada", &operatorv1.ListQuestionsRequest{Requester: "ada"}, "t4"},
			{"room/t3", &operatorv1.ListQuestionsRequest{Conversation: &conversationv1.Conversation{Channel: "room", Thread: "t3"}}, "t3"},
		} {
			got, err := e.member.ListQuestions(ctx, c.req)
			if err != nil || len(got.GetQuestions()) != 1 || got.GetQuestions()[0].GetConversation().GetThread() != c.want {
				t.Fatalf("%s: %v, %v; want the form of %s", c.name, got, err, c.want)
			}
		}
		_, err = e.member.ListQuestions(ctx, &operatorv1.ListQuestionsRequest{Status: operatorv1.QuestionStatus(9)})
		wantCode(t, "unknown status", err, codes.InvalidArgument)
	})
}

func TestQuestionsREST(t *testing.T) {
	e := startAPI(t)
	q := askQuestions(t, e, "t1", "mia")
	path := fmt.Sprintf("/v1/operator/questions/%d", q.ID)
	body := func(revision int) string {
		b, _ := json.Marshal(map[string]any{"revision": revision, "answers_json": stagingAnswer})
		return string(b)
	}

	if r := e.do(t, http.MethodPost, path+":saveDraft", e.adminToken, body(1)); r.code != http.StatusForbidden || jsonCode(t, r) != codes.PermissionDenied {
		t.Fatalf("another operator's draft = %d %s, want 403", r.code, r.body)
	}
	r := e.do(t, http.MethodPost, path+":saveDraft", e.memberToken, body(1))
	var saved struct {
		Question struct {
			Revision  string `json:"revision"`
			DraftJSON string `json:"draft_json"`
		} `json:"question"`
	}
	if err := json.Unmarshal(r.body, &saved); err != nil || r.code != http.StatusOK || saved.Question.Revision != "2" || saved.Question.DraftJSON != stagingAnswer {
		t.Fatalf("draft = %d %s (%v)", r.code, r.body, err)
	}
	if r := e.do(t, http.MethodPost, path+":submit", e.memberToken, body(1)); r.code != http.StatusConflict || jsonCode(t, r) != codes.Aborted {
		t.Fatalf("submit on a stale revision = %d %s, want 409", r.code, r.body)
	}
	if r := e.do(t, http.MethodPost, path+":submit", e.memberToken, body(2)); r.code != http.StatusOK {
		t.Fatalf("submit = %d %s", r.code, r.body)
	}
	if r := e.do(t, http.MethodPost, path+":cancel", e.memberToken, "{}"); r.code != http.StatusConflict {
		t.Fatalf("cancel a submitted form = %d %s, want 409", r.code, r.body)
	}
	r = e.do(t, http.MethodGet, "/v1/operator/questions?status=QUESTION_STATUS_SUBMITTED&requester=mia", e.memberToken, "")
	var list struct {
		Questions []struct {
			Status      string `json:"status"`
			AnswersJSON string `json:"answers_json"`
		} `json:"questions"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil || r.code != http.StatusOK || len(list.Questions) != 1 ||
		list.Questions[0].Status != "QUESTION_STATUS_SUBMITTED" || list.Questions[0].AnswersJSON != stagingAnswer {
		t.Fatalf("GET questions = %d %s (%v)", r.code, r.body, err)
	}
	if r := e.do(t, http.MethodGet, "/v1/operator/questions/999", e.memberToken, ""); r.code != http.StatusNotFound {
		t.Fatalf("GET unknown = %d %s, want 404", r.code, r.body)
	}
}
