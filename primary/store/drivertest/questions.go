package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// newQuestions is a request of requester in thread asking one text question titled title.
func newQuestions(thread, requester, title string) store.NewQuestionRequest {
	return store.NewQuestionRequest{
		Channel: "room", Thread: thread, Requester: requester, Agent: "coder", ResponseID: "r-1", Title: title,
		Presentation: "auto",
		Questions:    json.RawMessage(`[{"id":"why","prompt":"Why?","type":"text","options":[],"required":true,"allowCustom":true}]`),
	}
}

func ask(t *testing.T, s store.Store, r store.NewQuestionRequest) store.QuestionRequest {
	t.Helper()
	q, created, err := s.SaveQuestionRequest(context.Background(), r)
	if err != nil || !created {
		t.Fatalf("save %q: created %v, %v", r.Title, created, err)
	}
	return q
}

// tellAbout is the continuation of a submission of q.
func tellAbout(q store.QuestionRequest) store.NewContinuation {
	return store.NewContinuation{IdempotencyKey: store.QuestionContinuationKey(q.ID), Channel: q.Channel, Thread: q.Thread, Text: "answers of " + q.Title}
}

// continuationsKeyed counts the continuations with key, pending or not.
func continuationsKeyed(t *testing.T, s store.Store, key string) int {
	t.Helper()
	n := 0
	for _, k := range pendingKeys(t, s, 0, 10000) {
		if k == key {
			n++
		}
	}
	return n
}

// questionAuditOf returns the request's audit entries as "action actor detail", oldest first.
func questionAuditOf(t *testing.T, s store.Store, id int64) []string {
	t.Helper()
	es, err := s.ListAudit(context.Background(), store.AuditFilter{Subject: store.QuestionSubject(id)})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i := len(es) - 1; i >= 0; i-- {
		out = append(out, es[i].Action+" "+es[i].Actor+" "+string(es[i].Detail))
	}
	return out
}

func (cf conformance) testSaveQuestionRequest(t *testing.T) {
	ctx := context.Background()

	t.Run("ANewRequestIsPendingAtRevisionOneWithAnEmptyDraft", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		want := store.QuestionRequest{ID: q.ID, Channel: "room", Thread: "t1", Requester: "@alice", Agent: "coder",
			ResponseID: "r-1", Title: "Deploy", Presentation: "auto", Questions: newQuestions("t1", "@alice", "Deploy").Questions,
			Status: store.QuestionPending, Revision: 1, Draft: json.RawMessage(`{}`), CreatedAt: t0, UpdatedAt: t0}
		if !reflect.DeepEqual(q, want) {
			t.Fatalf("saved %+v\nwant  %+v", q, want)
		}
		if got, err := s.QuestionRequest(ctx, q.ID); err != nil || !reflect.DeepEqual(got, q) {
			t.Fatalf("read back %+v, %v", got, err)
		}
	})

	t.Run("TheIdenticalRequestAgainReturnsTheSameOne", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		again := newQuestions("t1", "@alice", "Deploy")
		again.ResponseID, again.Agent = "r-2", "other" // not what is asked
		got, created, err := s.SaveQuestionRequest(ctx, again)
		if err != nil || created || got.ID != q.ID {
			t.Fatalf("second save: %d created %v, %v; want %d not created", got.ID, created, err, q.ID)
		}
	})

	t.Run("ADifferentRequestIsRefusedWhileOneIsPendingAndNamesIt", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		got, created, err := s.SaveQuestionRequest(ctx, newQuestions("t1", "@alice", "Rollback"))
		if !errors.Is(err, store.ErrConflict) || created || got.ID != q.ID || got.Title != "Deploy" {
			t.Fatalf("different save: %+v created %v, %v; want ErrConflict with request %d", got, created, err, q.ID)
		}
		if all, _ := s.ListQuestionRequests(ctx, store.QuestionFilter{}); len(all) != 1 {
			t.Fatalf("%d requests saved, want 1", len(all))
		}
	})

	t.Run("OtherPeopleAndOtherThreadsHaveTheirOwn", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		a := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		b := ask(t, s, newQuestions("t1", "@bob", "Rollback"))
		c := ask(t, s, newQuestions("t2", "@alice", "Rollback"))
		other := newQuestions("t1", "@alice", "Rollback")
		other.Channel = "hall"
		d := ask(t, s, other)
		if a.ID == b.ID || a.ID == c.ID || a.ID == d.ID {
			t.Fatalf("ids %d %d %d %d", a.ID, b.ID, c.ID, d.ID)
		}
	})

	t.Run("AnEndedRequestMakesRoomForTheNext", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		first := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		if _, err := s.SubmitQuestionAnswers(ctx, first.ID, 1, "@alice", json.RawMessage(`{}`), tellAbout(first)); err != nil {
			t.Fatal(err)
		}
		second := ask(t, s, newQuestions("t1", "@alice", "Deploy")) // identical, but the first is no longer pending
		if _, err := s.CancelQuestionRequest(ctx, second.ID, "@alice"); err != nil {
			t.Fatal(err)
		}
		third := ask(t, s, newQuestions("t1", "@alice", "Rollback"))
		if second.ID == first.ID || third.ID == second.ID {
			t.Fatalf("ids %d %d %d", first.ID, second.ID, third.ID)
		}
	})

	t.Run("ConcurrentSavesOfOneRequestMakeOne", func(t *testing.T) {
		dir := cf.newHarness(t)
		stores := []store.Store{cf.open(t, dir, nil), cf.open(t, dir, nil)} // two processes on one file
		const goroutines = 20
		var wg sync.WaitGroup
		ids := make([]int64, goroutines)
		createdBy := make([]bool, goroutines)
		errs := make([]error, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				q, created, err := stores[g%2].SaveQuestionRequest(ctx, newQuestions("t1", "@alice", "Deploy"))
				ids[g], createdBy[g], errs[g] = q.ID, created, err
			})
		}
		wg.Wait()
		created := 0
		for g := range goroutines {
			if errs[g] != nil || ids[g] != ids[0] {
				t.Fatalf("save %d: request %d, %v; save 0 got %d", g, ids[g], errs[g], ids[0])
			}
			if createdBy[g] {
				created++
			}
		}
		if created != 1 {
			t.Fatalf("created %d times, want once", created)
		}
	})

	t.Run("ConcurrentDifferentRequestsLeaveExactlyOnePending", func(t *testing.T) {
		dir := cf.newHarness(t)
		stores := []store.Store{cf.open(t, dir, nil), cf.open(t, dir, nil)}
		const goroutines = 20
		var wg sync.WaitGroup
		got := make([]store.QuestionRequest, goroutines)
		createdBy := make([]bool, goroutines)
		errs := make([]error, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				got[g], createdBy[g], errs[g] = stores[g%2].SaveQuestionRequest(ctx, newQuestions("t1", "@alice", "Form "+string(rune('A'+g))))
			})
		}
		wg.Wait()
		var winner int64
		for g := range goroutines {
			if createdBy[g] {
				if winner != 0 {
					t.Fatalf("two requests created: %d and %d", winner, got[g].ID)
				}
				winner = got[g].ID
			}
		}
		for g := range goroutines {
			if !createdBy[g] && (!errors.Is(errs[g], store.ErrConflict) || got[g].ID != winner) {
				t.Fatalf("save %d: %d, %v; want ErrConflict naming %d", g, got[g].ID, errs[g], winner)
			}
		}
		pending, err := stores[0].ListQuestionRequests(ctx, store.QuestionFilter{Status: store.QuestionPending})
		if err != nil || len(pending) != 1 || pending[0].ID != winner {
			t.Fatalf("pending %+v, %v; want only %d", pending, err, winner)
		}
	})

	t.Run("InvalidRequestsAreRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for name, change := range map[string]func(*store.NewQuestionRequest){
			"noChannel":           func(r *store.NewQuestionRequest) { r.Channel = "" },
			"noThread":            func(r *store.NewQuestionRequest) { r.Thread = "" },
			"noRequester":         func(r *store.NewQuestionRequest) { r.Requester = "" },
			"noTitle":             func(r *store.NewQuestionRequest) { r.Title = "" },
			"unknownPresentation": func(r *store.NewQuestionRequest) { r.Presentation = "popup" },
			"questionsNotArray":   func(r *store.NewQuestionRequest) { r.Questions = json.RawMessage(`{}`) },
			"questionsEmpty":      func(r *store.NewQuestionRequest) { r.Questions = json.RawMessage(` [ ] `) },
			"questionsNotJSON":    func(r *store.NewQuestionRequest) { r.Questions = json.RawMessage(`[`) },
		} {
			r := newQuestions("t1", "@alice", "Deploy")
			change(&r)
			if _, _, err := s.SaveQuestionRequest(ctx, r); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if all, _ := s.ListQuestionRequests(ctx, store.QuestionFilter{}); len(all) != 0 {
			t.Fatalf("%d requests saved", len(all))
		}
	})
}

func (cf conformance) testQuestionDrafts(t *testing.T) {
	ctx := context.Background()

	t.Run("ADraftAtTheCurrentRevisionIsSavedAndIncreasesIt", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		clk.Set(t0.Add(time.Minute))
		got, err := s.SaveQuestionDraft(ctx, q.ID, 1, json.RawMessage(`{ "why": {"values": [], "custom": "x"} }`))
		if err != nil {
			t.Fatal(err)
		}
		if got.Revision != 2 || string(got.Draft) != `{"why":{"values":[],"custom":"x"}}` || got.Status != store.QuestionPending ||
			!got.UpdatedAt.Equal(t0.Add(time.Minute)) || !got.CreatedAt.Equal(t0) || got.Answers != nil {
			t.Fatalf("after a draft: %+v", got)
		}
		if got, err = s.SaveQuestionDraft(ctx, q.ID, 2, json.RawMessage(`{}`)); err != nil || got.Revision != 3 || string(got.Draft) != `{}` {
			t.Fatalf("second draft: %+v, %v", got, err)
		}
	})

	t.Run("AStaleRevisionIsAConflictAndChangesNothing", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		saved, err := s.SaveQuestionDraft(ctx, q.ID, 1, json.RawMessage(`{"a":1}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, rev := range []int64{0, 1, 3} {
			_, err := s.SaveQuestionDraft(ctx, q.ID, rev, json.RawMessage(`{"b":2}`))
			if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "it is at revision 2") {
				t.Fatalf("draft at revision %d: %v, want ErrConflict naming revision 2", rev, err)
			}
		}
		if got, _ := s.QuestionRequest(ctx, q.ID); !reflect.DeepEqual(got, saved) {
			t.Fatalf("after stale drafts %+v, want %+v", got, saved)
		}
	})

	t.Run("ConcurrentDraftsAtOneRevisionHaveOneWinner", func(t *testing.T) {
		dir := cf.newHarness(t)
		stores := []store.Store{cf.open(t, dir, nil), cf.open(t, dir, nil)}
		q := ask(t, stores[0], newQuestions("t1", "@alice", "Deploy"))
		const goroutines = 20
		var wg sync.WaitGroup
		errs := make([]error, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				_, errs[g] = stores[g%2].SaveQuestionDraft(ctx, q.ID, 1, json.RawMessage(`{}`))
			})
		}
		wg.Wait()
		won := 0
		for g := range goroutines {
			switch {
			case errs[g] == nil:
				won++
			case !errors.Is(errs[g], store.ErrConflict):
				t.Fatalf("draft %d: %v", g, errs[g])
			}
		}
		if got, _ := stores[0].QuestionRequest(ctx, q.ID); won != 1 || got.Revision != 2 {
			t.Fatalf("%d drafts won, revision %d; want 1 and 2", won, got.Revision)
		}
	})

	t.Run("DraftsMustBeJSONObjects", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		for _, d := range []string{``, `[]`, `"x"`, `{`, `null`} {
			if _, err := s.SaveQuestionDraft(ctx, q.ID, 1, json.RawMessage(d)); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("draft %q: %v, want ErrInvalid", d, err)
			}
		}
	})
}

func (cf conformance) testSubmitQuestionAnswers(t *testing.T) {
	ctx := context.Background()
	answers := json.RawMessage(`{"why":{"values":[],"custom":"because"}}`)

	t.Run("ASubmissionAndItsContinuationAreWrittenTogetherOnce", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		clk.Set(t0.Add(time.Hour))
		got, err := s.SubmitQuestionAnswers(ctx, q.ID, 1, "@alice", answers, tellAbout(q))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.QuestionSubmitted || got.Revision != 2 || string(got.Answers) != string(answers) ||
			string(got.Draft) != string(answers) || !got.SubmittedAt.Equal(t0.Add(time.Hour)) || got.CancelledBy != "" {
			t.Fatalf("submitted %+v", got)
		}
		cs, err := s.PendingContinuations(ctx, 0, 100)
		if err != nil || len(cs) != 1 || cs[0].IdempotencyKey != "questions:"+strconv.FormatInt(q.ID, 10) || cs[0].Channel != "room" ||
			cs[0].Thread != "t1" || cs[0].Text != "answers of Deploy" {
			t.Fatalf("continuations %+v, %v", cs, err)
		}
		if a := questionAuditOf(t, s, q.ID); !reflect.DeepEqual(a, []string{`question.submit @alice {"question":` + strconv.FormatInt(q.ID, 10) + `}`}) {
			t.Fatalf("audit %q", a)
		}

		for _, rev := range []int64{1, 2} {
			if _, err := s.SubmitQuestionAnswers(ctx, q.ID, rev, "@alice", answers, tellAbout(q)); !errors.Is(err, store.ErrConflict) ||
				!strings.Contains(err.Error(), "it is submitted") {
				t.Fatalf("second submit at revision %d: %v, want ErrConflict", rev, err)
			}
		}
		if _, err := s.SaveQuestionDraft(ctx, q.ID, 2, answers); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("draft after submit: %v, want ErrConflict", err)
		}
		if n := continuationsKeyed(t, s, store.QuestionContinuationKey(q.ID)); n != 1 {
			t.Fatalf("%d continuations, want 1", n)
		}
	})

	t.Run("AStaleRevisionIsAConflictAndWritesNothing", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		if _, err := s.SaveQuestionDraft(ctx, q.ID, 1, answers); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SubmitQuestionAnswers(ctx, q.ID, 1, "@alice", answers, tellAbout(q)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("stale submit: %v, want ErrConflict", err)
		}
		if got, _ := s.QuestionRequest(ctx, q.ID); got.Status != store.QuestionPending || got.Revision != 2 {
			t.Fatalf("after a stale submit %+v", got)
		}
		if n := len(pendingKeys(t, s, 0, 100)); n != 0 {
			t.Fatalf("%d continuations after a stale submit", n)
		}
	})

	t.Run("ConcurrentSubmitsHaveOneWinnerAndOneContinuation", func(t *testing.T) {
		dir := cf.newHarness(t)
		stores := []store.Store{cf.open(t, dir, nil), cf.open(t, dir, nil)}
		q := ask(t, stores[0], newQuestions("t1", "@alice", "Deploy"))
		const goroutines = 20
		var wg sync.WaitGroup
		errs := make([]error, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				_, errs[g] = stores[g%2].SubmitQuestionAnswers(ctx, q.ID, 1, "@alice", answers, tellAbout(q))
			})
		}
		wg.Wait()
		won := 0
		for g := range goroutines {
			switch {
			case errs[g] == nil:
				won++
			case !errors.Is(errs[g], store.ErrConflict):
				t.Fatalf("submit %d: %v", g, errs[g])
			}
		}
		if n := continuationsKeyed(t, stores[0], store.QuestionContinuationKey(q.ID)); won != 1 || n != 1 {
			t.Fatalf("%d submits won, %d continuations; want 1 and 1", won, n)
		}
	})

	t.Run("AFailedContinuationLeavesTheRequestPending", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		enqueue(t, s, store.QuestionContinuationKey(q.ID)) // the key is taken: the submission must not happen without its own
		if _, err := s.SubmitQuestionAnswers(ctx, q.ID, 1, "@alice", answers, tellAbout(q)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("submit with a taken key: %v, want ErrConflict", err)
		}
		bad := tellAbout(q)
		bad.Text = ""
		if _, err := s.SubmitQuestionAnswers(ctx, q.ID, 1, "@alice", answers, bad); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("submit with an invalid continuation: %v, want ErrInvalid", err)
		}
		elsewhere := tellAbout(q)
		elsewhere.IdempotencyKey, elsewhere.Thread = "questions:elsewhere", "t2"
		if _, err := s.SubmitQuestionAnswers(ctx, q.ID, 1, "@alice", answers, elsewhere); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("submit telling another thread: %v, want ErrInvalid", err)
		}
		if got, _ := s.QuestionRequest(ctx, q.ID); !reflect.DeepEqual(got, q) {
			t.Fatalf("after failed submits %+v, want %+v", got, q)
		}
		if a := questionAuditOf(t, s, q.ID); len(a) != 0 {
			t.Fatalf("audit %q after failed submits", a)
		}
	})

	t.Run("AFailedAuditWriteLeavesTheRequestPending", func(t *testing.T) {
		s, failAudit := cf.openFaulty(t, nil, nil)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		// The audit entry is written after the change, in the same transaction; make it fail.
		failAudit.Store(true)
		if _, err := s.SubmitQuestionAnswers(ctx, q.ID, 1, "@alice", answers, tellAbout(q)); err == nil {
			t.Fatal("submitted without its audit entry")
		}
		if got, _ := s.QuestionRequest(ctx, q.ID); !reflect.DeepEqual(got, q) {
			t.Fatalf("after a failed submit %+v", got)
		}
		if n := len(pendingKeys(t, s, 0, 100)); n != 0 {
			t.Fatalf("%d continuations after a failed submit", n)
		}
	})

	t.Run("InvalidSubmissionsAreRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		if _, err := s.SubmitQuestionAnswers(ctx, q.ID, 1, "", answers, tellAbout(q)); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("no actor: %v", err)
		}
		if _, err := s.SubmitQuestionAnswers(ctx, q.ID, 1, "@alice", json.RawMessage(`[]`), tellAbout(q)); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("answers not an object: %v", err)
		}
	})
}

func (cf conformance) testCancelQuestionRequests(t *testing.T) {
	ctx := context.Background()

	t.Run("CancelEndsAPendingRequestOnce", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		clk.Set(t0.Add(time.Second))
		got, err := s.CancelQuestionRequest(ctx, q.ID, "admin")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.QuestionCancelled || got.CancelledBy != "admin" || !got.CancelledAt.Equal(t0.Add(time.Second)) ||
			got.Revision != 2 || got.Answers != nil || !got.SubmittedAt.IsZero() {
			t.Fatalf("cancelled %+v", got)
		}
		if _, err := s.CancelQuestionRequest(ctx, q.ID, "admin"); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second cancel: %v, want ErrConflict", err)
		}
		if _, err := s.SubmitQuestionAnswers(ctx, q.ID, 2, "@alice", json.RawMessage(`{}`), tellAbout(q)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("submit after cancel: %v, want ErrConflict", err)
		}
		if _, err := s.SaveQuestionDraft(ctx, q.ID, 2, json.RawMessage(`{}`)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("draft after cancel: %v, want ErrConflict", err)
		}
		if a := questionAuditOf(t, s, q.ID); !reflect.DeepEqual(a, []string{`question.cancel admin {"question":` + strconv.FormatInt(q.ID, 10) + `}`}) {
			t.Fatalf("audit %q", a)
		}
		if n := len(pendingKeys(t, s, 0, 100)); n != 0 {
			t.Fatalf("%d continuations after a cancel", n)
		}
	})

	t.Run("StoppingAThreadCancelsItsPendingRequestsOnly", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		a := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		b := ask(t, s, newQuestions("t1", "@bob", "Deploy"))
		done := ask(t, s, newQuestions("t1", "@carol", "Deploy"))
		if _, err := s.SubmitQuestionAnswers(ctx, done.ID, 1, "@carol", json.RawMessage(`{}`), tellAbout(done)); err != nil {
			t.Fatal(err)
		}
		other := ask(t, s, newQuestions("t2", "@alice", "Deploy"))
		got, err := s.CancelThreadQuestionRequests(ctx, "room", "t1", "primary")
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, q := range got {
			if q.Status != store.QuestionCancelled || q.CancelledBy != "primary" {
				t.Errorf("returned %+v", q)
			}
			ids = append(ids, q.ID)
		}
		if len(ids) != 2 || !(ids[0] == a.ID && ids[1] == b.ID || ids[0] == b.ID && ids[1] == a.ID) {
			t.Fatalf("cancelled %v, want %d and %d", ids, a.ID, b.ID)
		}
		for id, want := range map[int64]store.QuestionStatus{done.ID: store.QuestionSubmitted, other.ID: store.QuestionPending} {
			if q, _ := s.QuestionRequest(ctx, id); q.Status != want {
				t.Errorf("request %d is %s, want %s", id, q.Status, want)
			}
		}
		if len(questionAuditOf(t, s, a.ID)) != 1 || len(questionAuditOf(t, s, b.ID)) != 1 {
			t.Error("a cancelled request has no audit entry")
		}
		if again, err := s.CancelThreadQuestionRequests(ctx, "room", "t1", "primary"); err != nil || len(again) != 0 {
			t.Fatalf("second stop: %+v, %v; want none", again, err)
		}
	})

	t.Run("UnknownRequestsAreNotFound", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for name, call := range map[string]func() error{
			"read":   func() error { _, err := s.QuestionRequest(ctx, 999); return err },
			"draft":  func() error { _, err := s.SaveQuestionDraft(ctx, 999, 1, json.RawMessage(`{}`)); return err },
			"cancel": func() error { _, err := s.CancelQuestionRequest(ctx, 999, "admin"); return err },
			"submit": func() error {
				_, err := s.SubmitQuestionAnswers(ctx, 999, 1, "@alice", json.RawMessage(`{}`),
					store.NewContinuation{IdempotencyKey: "questions:999", Channel: "room", Thread: "t1", Text: "x"})
				return err
			},
		} {
			if err := call(); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: %v, want ErrNotFound", name, err)
			}
		}
		if n := len(pendingKeys(t, s, 0, 100)); n != 0 {
			t.Fatalf("%d continuations", n)
		}
	})

	t.Run("ACancellationNeedsAnActor", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		q := ask(t, s, newQuestions("t1", "@alice", "Deploy"))
		if _, err := s.CancelQuestionRequest(ctx, q.ID, ""); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("cancel: %v", err)
		}
		if _, err := s.CancelThreadQuestionRequests(ctx, "room", "t1", ""); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("cancel thread: %v", err)
		}
	})
}

func (cf conformance) testListQuestionRequests(t *testing.T) {
	ctx := context.Background()
	s := cf.open(t, nil, nil)
	a := ask(t, s, newQuestions("t1", "@alice", "A"))
	b := ask(t, s, newQuestions("t1", "@bob", "B"))
	c := ask(t, s, newQuestions("t2", "@alice", "C"))
	other := newQuestions("t1", "@alice", "D")
	other.Channel = "hall"
	d := ask(t, s, other)
	if _, err := s.CancelQuestionRequest(ctx, b.ID, "@bob"); err != nil {
		t.Fatal(err)
	}
	ids := func(f store.QuestionFilter) []int64 {
		t.Helper()
		qs, err := s.ListQuestionRequests(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, q := range qs {
			out = append(out, q.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    store.QuestionFilter
		want []int64
	}{
		{"EverythingNewestFirst", store.QuestionFilter{}, []int64{d.ID, c.ID, b.ID, a.ID}},
		{"ByStatus", store.QuestionFilter{Status: store.QuestionCancelled}, []int64{b.ID}},
		{"ByChannel", store.QuestionFilter{Channel: "room"}, []int64{c.ID, b.ID, a.ID}},
		{"ByConversation", store.QuestionFilter{Channel: "room", Thread: "t1"}, []int64{b.ID, a.ID}},
		{"ByRequester", store.QuestionFilter{Requester: "@alice"}, []int64{d.ID, c.ID, a.ID}},
		{"PendingOfAPersonInAConversation", store.QuestionFilter{Status: store.QuestionPending, Channel: "room", Thread: "t1", Requester: "@alice"}, []int64{a.ID}},
		{"Limited", store.QuestionFilter{Limit: 2}, []int64{d.ID, c.ID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(tc.f); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("InvalidFiltersAreRefused", func(t *testing.T) {
		for _, f := range []store.QuestionFilter{{Limit: -1}, {Limit: 1001}, {Status: "answered"}} {
			if _, err := s.ListQuestionRequests(ctx, f); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%+v: %v, want ErrInvalid", f, err)
			}
		}
	})
}
