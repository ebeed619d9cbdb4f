package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

// feedOf returns the thread feed after after as "kind/key change channel/thread", oldest
// first, checking that ids grow.
func feedOf(t *testing.T, s store.Store, f store.ThreadEventFilter) []string {
	t.Helper()
	es, err := s.ListThreadEvents(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i, e := range es {
		if i > 0 && e.ID <= es[i-1].ID {
			t.Fatalf("ids do not grow: %d after %d", e.ID, es[i-1].ID)
		}
		out = append(out, string(e.Kind)+"/"+e.Key+" "+string(e.Change)+" "+e.Channel+"/"+e.Thread)
	}
	return out
}

func (cf conformance) testThreadEvents(t *testing.T) {
	ctx := context.Background()
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	want := func(t *testing.T, got, want []string) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("feed\n got %q\nwant %q", got, want)
		}
	}

	t.Run("EachItemIsToldAsItOpensChangesAndCloses", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0}) // before the prompt's deadline
		ap := save(t, s, newApproval("t1", "make test"))
		if _, err := s.CommentApproval(ctx, ap.ID, "@bob", "why?"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.BeginApproval(ctx, ap.ID, "admin"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SettleApproval(ctx, ap.ID, store.ApprovalFailed, "could not start"); err != nil {
			t.Fatal(err)
		}
		pr := createPrompt(t, s, newApprovalPrompt("t2"))
		if _, err := s.DecidePrompt(ctx, pr.ID, "@bob", store.DecisionApprove, ""); err != nil {
			t.Fatal(err)
		}
		call, err := s.SaveCallApproval(ctx, newCall(callA))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApproveCallApproval(ctx, call.ID, "admin"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimCallApproval(ctx, call.ID); err != nil {
			t.Fatal(err)
		}
		q := ask(t, s, newQuestions("t3", "@alice", "Deploy?"))
		if q, err = s.SaveQuestionDraft(ctx, q.ID, q.Revision, json.RawMessage(`{"why":"soon"}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SubmitQuestionAnswers(ctx, q.ID, q.Revision, "@alice", json.RawMessage(`{"why":"now"}`), tellAbout(q)); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveProgress(ctx, snapshot("r1", "t4", "Build")); err != nil {
			t.Fatal(err)
		}
		j, err := s.CreateJob(ctx, newJob("t5"), store.JobCaps{})
		if err != nil {
			t.Fatal(err)
		}
		code := 0
		if _, _, err := s.FinishJob(ctx, j.ID, store.JobResult{Outcome: "success", ExitCode: &code}, cont(j.ID)); err != nil {
			t.Fatal(err)
		}
		want(t, feedOf(t, s, store.ThreadEventFilter{}), []string{
			"approval/" + id(ap.ID) + " opened room/t1",
			"approval/" + id(ap.ID) + " updated room/t1",
			"approval/" + id(ap.ID) + " closed room/t1",
			"approval/" + id(ap.ID) + " updated room/t1",
			"prompt/" + id(pr.ID) + " opened room/t2",
			"prompt/" + id(pr.ID) + " closed room/t2",
			"call_approval/" + id(call.ID) + " opened room/t1",
			"call_approval/" + id(call.ID) + " closed room/t1",
			"call_approval/" + id(call.ID) + " updated room/t1",
			"question/" + id(q.ID) + " opened room/t3",
			"question/" + id(q.ID) + " updated room/t3",
			"question/" + id(q.ID) + " closed room/t3",
			"progress/r1 updated room/t4",
			"job/" + id(j.ID) + " opened room/t5",
			"job/" + id(j.ID) + " closed room/t5",
		})
	})

	t.Run("AChangeThatFailsIsNotTold", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		ap := save(t, s, newApproval("t1", "make test"))
		if _, err := s.DenyApproval(ctx, ap.ID, "@bob", "no"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.BeginApproval(ctx, ap.ID, "admin"); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("approve after a denial: %v, want ErrConflict", err)
		}
		code := 0
		if _, _, err := s.FinishJob(ctx, 999, store.JobResult{Outcome: "success", ExitCode: &code}, cont(999)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("finish of no job: %v, want ErrNotFound", err)
		}
		if _, _, err := s.SaveApproval(ctx, newApproval("t1", "make lint")); err != nil {
			t.Fatal(err)
		}
		if _, created, err := s.SaveApproval(ctx, newApproval("t1", "make lint")); err != nil || created {
			t.Fatalf("the same request again: created %v, %v", created, err)
		}
		got := feedOf(t, s, store.ThreadEventFilter{})
		if len(got) != 3 {
			t.Fatalf("feed %q, want the first approval's opening and closing and the second's opening only", got)
		}
	})

	t.Run("AReaderResumesAfterAnIdAndFiltersByConversation", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for _, thread := range []string{"t1", "t2", "t1", ""} {
			save(t, s, newApproval(thread, "make "+thread+strconv.Itoa(len(feedOf(t, s, store.ThreadEventFilter{})))))
		}
		all, err := s.ListThreadEvents(ctx, store.ThreadEventFilter{})
		if err != nil || len(all) != 4 {
			t.Fatalf("all %+v, %v", all, err)
		}
		after, err := s.ListThreadEvents(ctx, store.ThreadEventFilter{After: all[1].ID, Limit: 1})
		if err != nil || len(after) != 1 || after[0] != all[2] {
			t.Fatalf("one after the second: %+v, %v; want %+v", after, err, all[2])
		}
		if got := feedOf(t, s, store.ThreadEventFilter{Channel: "room", Thread: "t1"}); len(got) != 2 {
			t.Fatalf("thread t1: %q, want its 2 events", got)
		}
		if got := feedOf(t, s, store.ThreadEventFilter{Channel: "room"}); len(got) != 1 {
			t.Fatalf("the channel's main timeline: %q, want its 1 event", got)
		}
		if !all[0].At.Equal(all[0].At.UTC()) || all[0].At.IsZero() {
			t.Fatalf("event time %v", all[0].At)
		}
	})

	t.Run("AnItemOfNoConversationIsNotTold", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		c := newCall(callB)
		c.Channel, c.Thread = "", ""
		if _, err := s.SaveCallApproval(ctx, c); err != nil {
			t.Fatal(err)
		}
		if got := feedOf(t, s, store.ThreadEventFilter{}); len(got) != 0 {
			t.Fatalf("feed %q, want nothing", got)
		}
	})

	t.Run("ABadFilterIsRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for _, f := range []store.ThreadEventFilter{{After: -1}, {Thread: "t1"}, {Limit: 1001}} {
			if _, err := s.ListThreadEvents(ctx, f); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%+v: %v, want ErrInvalid", f, err)
			}
		}
		if _, err := s.ListThreadEvents(ctx, store.ThreadEventFilter{Limit: 1000}); err != nil {
			t.Errorf("limit 1000: %v", err)
		}
	})
}
