package drivertest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

func (cf conformance) testListConversations(t *testing.T) {
	ctx := context.Background()

	t.Run("EveryKindOfRecordNamesItsConversationNewestActivityFirst", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		at := func(minutes int) time.Time { clk.Set(t0.Add(time.Duration(minutes) * time.Minute)); return clk.Now() }
		at(1)
		if _, err := s.SetConversationMode(ctx, "room", "mode", store.ModeAuto, "admin-1"); err != nil {
			t.Fatal(err)
		}
		at(2)
		if _, err := s.SetShellMode(ctx, "room", "shell", "coder", store.ShellModeMinimal, "", "admin-1"); err != nil {
			t.Fatal(err)
		}
		at(3)
		if _, err := s.CreateJob(ctx, newJob("job"), store.JobCaps{}); err != nil {
			t.Fatal(err)
		}
		at(4)
		save(t, s, newApproval("approval", "make release"))
		at(5)
		c := newCall(callA)
		c.Thread = "call"
		saveCall(t, s, c)
		at(6)
		createPrompt(t, s, newApprovalPrompt("prompt"))
		at(7)
		ask(t, s, newQuestions("question", "@alice", "Why?"))
		at(8)
		// A later record of an older conversation makes it the newest; its mode stays.
		if _, err := s.CreateJob(ctx, newJob("mode"), store.JobCaps{}); err != nil {
			t.Fatal(err)
		}
		// A call approval without a channel names no conversation.
		at(9)
		orphan := newCall(callB)
		orphan.Channel, orphan.Thread = "", ""
		saveCall(t, s, orphan)

		got, err := s.ListConversations(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		ask := store.ModeSetting{Mode: store.ModeAsk}
		want := []store.ConversationSummary{
			{Channel: "room", Thread: "mode", Mode: store.ModeSetting{Mode: store.ModeAuto, UpdatedAt: t0.Add(time.Minute), UpdatedBy: "admin-1"}, LastActivity: t0.Add(8 * time.Minute)},
			{Channel: "room", Thread: "question", Mode: ask, LastActivity: t0.Add(7 * time.Minute)},
			{Channel: "room", Thread: "prompt", Mode: ask, LastActivity: t0.Add(6 * time.Minute)},
			{Channel: "room", Thread: "call", Mode: ask, LastActivity: t0.Add(5 * time.Minute)},
			{Channel: "room", Thread: "approval", Mode: ask, LastActivity: t0.Add(4 * time.Minute)},
			{Channel: "room", Thread: "job", Mode: ask, LastActivity: t0.Add(3 * time.Minute)},
			{Channel: "room", Thread: "shell", Mode: ask, LastActivity: t0.Add(2 * time.Minute)},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("conversations\n%+v\nwant\n%+v", got, want)
		}
		if two, err := s.ListConversations(ctx, 2); err != nil || !reflect.DeepEqual(two, want[:2]) {
			t.Fatalf("limit 2: %+v, %v", two, err)
		}
	})

	t.Run("AnEmptyStoreHasNone", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		if got, err := s.ListConversations(ctx, 0); err != nil || len(got) != 0 {
			t.Fatalf("conversations %+v, %v", got, err)
		}
	})

	t.Run("ALimitOutOfRangeIsInvalid", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for _, limit := range []int{-1, 1001} {
			if _, err := s.ListConversations(ctx, limit); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("limit %d: %v, want ErrInvalid", limit, err)
			}
		}
	})
}
