package drivertest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// lister is one of the store's lists as the paging cases see it: add inserts one more record
// and returns its key; page reads up to limit records after pos (nil for the first page) and
// returns their keys and the position of the last one.
type lister struct {
	name string
	add  func(t *testing.T, s store.Store, i int) string
	page func(s store.Store, pos any, limit int) (keys []string, last any, err error)
	// bad are positions no record can have, refused with ErrInvalid.
	bad []any
}

// byID pages a list ordered by id, newest first: the position is the id of the last record.
func byID[R any](list func(s store.Store, before int64, limit int) ([]R, error), id func(R) int64) func(store.Store, any, int) ([]string, any, error) {
	return func(s store.Store, pos any, limit int) ([]string, any, error) {
		before, _ := pos.(int64)
		rs, err := list(s, before, limit)
		keys := make([]string, 0, len(rs))
		var last any
		for _, r := range rs {
			keys, last = append(keys, strconv.FormatInt(id(r), 10)), id(r)
		}
		return keys, last, err
	}
}

func (cf conformance) listers() []lister {
	ctx := context.Background()
	return []lister{
		{
			name: "Audit",
			add: func(t *testing.T, s store.Store, i int) string {
				id, err := s.AppendAudit(ctx, store.NewAuditEntry{Actor: "ada", Action: "x.y"})
				if err != nil {
					t.Fatal(err)
				}
				return strconv.FormatInt(id, 10)
			},
			page: byID(func(s store.Store, before int64, limit int) ([]store.AuditEntry, error) {
				return s.ListAudit(ctx, store.AuditFilter{Actor: "ada", BeforeID: before, Limit: limit})
			}, func(e store.AuditEntry) int64 { return e.ID }),
			bad: []any{int64(-1)},
		},
		{
			name: "Jobs",
			add: func(t *testing.T, s store.Store, i int) string {
				j, err := s.CreateJob(ctx, newJob("t1"), store.JobCaps{})
				if err != nil {
					t.Fatal(err)
				}
				return strconv.FormatInt(j.ID, 10)
			},
			page: byID(func(s store.Store, before int64, limit int) ([]store.Job, error) {
				return s.PageJobs(ctx, store.JobFilter{Channel: "room", Thread: "t1", BeforeID: before, Limit: limit})
			}, func(j store.Job) int64 { return j.ID }),
			bad: []any{int64(-1)},
		},
		{
			name: "Approvals",
			add: func(t *testing.T, s store.Store, i int) string {
				return strconv.FormatInt(save(t, s, newApproval("t1", fmt.Sprintf("make %d", i))).ID, 10)
			},
			page: byID(func(s store.Store, before int64, limit int) ([]store.Approval, error) {
				return s.ListApprovals(ctx, store.ApprovalFilter{Channel: "room", Thread: "t1", BeforeID: before, Limit: limit})
			}, func(a store.Approval) int64 { return a.ID }),
			bad: []any{int64(-1)},
		},
		{
			name: "CallApprovals",
			add: func(t *testing.T, s store.Store, i int) string {
				return strconv.FormatInt(saveCall(t, s, newCall(fmt.Sprintf("6f1c1a52-2f4e-4a43-9d43-%012d", i))).ID, 10)
			},
			page: byID(func(s store.Store, before int64, limit int) ([]store.CallApproval, error) {
				return s.ListCallApprovals(ctx, store.CallApprovalFilter{Status: store.CallApprovalWaiting, BeforeID: before, Limit: limit})
			}, func(c store.CallApproval) int64 { return c.ID }),
			bad: []any{int64(-1)},
		},
		{
			name: "Prompts",
			add: func(t *testing.T, s store.Store, i int) string {
				return strconv.FormatInt(createPrompt(t, s, newApprovalPrompt("t1")).ID, 10)
			},
			page: byID(func(s store.Store, before int64, limit int) ([]store.Prompt, error) {
				return s.ListPrompts(ctx, store.PromptFilter{Kind: store.PromptApproval, BeforeID: before, Limit: limit})
			}, func(p store.Prompt) int64 { return p.ID }),
			bad: []any{int64(-1)},
		},
		{
			name: "QuestionRequests",
			add: func(t *testing.T, s store.Store, i int) string {
				return strconv.FormatInt(ask(t, s, newQuestions("t1", fmt.Sprintf("@r%d", i), "Why?")).ID, 10)
			},
			page: byID(func(s store.Store, before int64, limit int) ([]store.QuestionRequest, error) {
				return s.ListQuestionRequests(ctx, store.QuestionFilter{Channel: "room", BeforeID: before, Limit: limit})
			}, func(q store.QuestionRequest) int64 { return q.ID }),
			bad: []any{int64(-1)},
		},
		{
			name: "Progress",
			add: func(t *testing.T, s store.Store, i int) string {
				id := fmt.Sprintf("r%02d", i)
				if err := s.SaveProgress(ctx, snapshot(id, "t1", "Build")); err != nil {
					t.Fatal(err)
				}
				return id
			},
			page: func(s store.Store, pos any, limit int) ([]string, any, error) {
				after, _ := pos.(store.ProgressPosition)
				ps, err := s.ListProgress(ctx, store.ProgressFilter{Channel: "room", Thread: "t1", After: after, Limit: limit})
				keys := make([]string, 0, len(ps))
				var last any
				for _, p := range ps {
					keys, last = append(keys, p.ResponseID), store.ProgressPosition{UpdatedAt: p.UpdatedAt, ResponseID: p.ResponseID}
				}
				return keys, last, err
			},
			bad: []any{store.ProgressPosition{ResponseID: "r01"}, store.ProgressPosition{UpdatedAt: t0}},
		},
		{
			name: "PermissionAllowances",
			add: func(t *testing.T, s store.Store, i int) string {
				tool := fmt.Sprintf("Tool%02d", i)
				p := createPrompt(t, s, newPermissionPrompt("t1", tool))
				if _, err := s.DecidePrompt(ctx, p.ID, "ada", store.DecisionAllowConversation, ""); err != nil {
					t.Fatal(err)
				}
				return tool
			},
			page: func(s store.Store, pos any, limit int) ([]string, any, error) {
				after, _ := pos.(store.AllowancePosition)
				as, err := s.ListPermissionAllowances(ctx, store.AllowanceFilter{Channel: "room", Thread: "t1", After: after, Limit: limit})
				keys := make([]string, 0, len(as))
				var last any
				for _, a := range as {
					keys = append(keys, a.ToolName)
					last = store.AllowancePosition{GrantedAt: a.GrantedAt, Channel: a.Channel, Thread: a.Thread, ToolName: a.ToolName, Scope: a.Scope}
				}
				return keys, last, err
			},
			bad: []any{store.AllowancePosition{Channel: "room", ToolName: "Tool01"}, store.AllowancePosition{GrantedAt: t0}},
		},
	}
}

// testPaging: every list reads a page at a time by position (keyset), so that its pages
// partition it however many records are inserted between them.
func (cf conformance) testPaging(t *testing.T) {
	// fill adds n records, two at each time of the clock, so that lists ordered by time also
	// meet ties.
	fill := func(t *testing.T, l lister, s store.Store, clk *clock, from, n int) {
		for i := from; i < from+n; i++ {
			clk.Set(t0.Add(time.Duration(i/2) * time.Second))
			l.add(t, s, i)
		}
	}
	// walk reads the whole list from pos in pages of size.
	walk := func(t *testing.T, l lister, s store.Store, pos any, size int) []string {
		var all []string
		for range 100 {
			keys, last, err := l.page(s, pos, size)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, keys...)
			if len(keys) < size {
				return all
			}
			pos = last
		}
		t.Fatal("the pages never end")
		return nil
	}
	for _, l := range cf.listers() {
		t.Run(l.name, func(t *testing.T) {
			t.Run("PagesPartitionTheListInItsOrder", func(t *testing.T) {
				clk := &clock{t: t0}
				s := cf.open(t, nil, clk)
				fill(t, l, s, clk, 0, 7)
				whole, _, err := l.page(s, nil, 0)
				if err != nil || len(whole) != 7 {
					t.Fatalf("whole list %v, %v; want 7 records", whole, err)
				}
				for _, size := range []int{1, 2, 3, 7} {
					if got := walk(t, l, s, nil, size); !reflect.DeepEqual(got, whole) {
						t.Errorf("pages of %d: %v, want %v", size, got, whole)
					}
				}
			})
			t.Run("RecordsInsertedBetweenPagesNeitherShiftNorRepeatThem", func(t *testing.T) {
				clk := &clock{t: t0}
				s := cf.open(t, nil, clk)
				fill(t, l, s, clk, 0, 6)
				whole, _, _ := l.page(s, nil, 0)
				first, last, err := l.page(s, nil, 2)
				if err != nil || !reflect.DeepEqual(first, whole[:2]) {
					t.Fatalf("first page %v, %v; want %v", first, err, whole[:2])
				}
				fill(t, l, s, clk, 6, 3)
				if rest := walk(t, l, s, last, 2); !reflect.DeepEqual(rest, whole[2:]) {
					t.Errorf("after the first page: %v, want %v", rest, whole[2:])
				}
				if fresh, _, _ := l.page(s, nil, 4); len(fresh) != 4 || fresh[3] != whole[0] {
					t.Errorf("a new first page %v, want the 3 new records before %s", fresh, whole[0])
				}
			})
			t.Run("APositionNoRecordCanHaveIsInvalid", func(t *testing.T) {
				s := cf.open(t, nil, &clock{t: t0})
				for _, pos := range l.bad {
					if _, _, err := l.page(s, pos, 2); !errors.Is(err, store.ErrInvalid) {
						t.Errorf("position %+v: %v, want ErrInvalid", pos, err)
					}
				}
			})
		})
	}
}
