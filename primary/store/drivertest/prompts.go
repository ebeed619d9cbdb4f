package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

func newApprovalPrompt(thread string) store.NewPrompt {
	return store.NewPrompt{Kind: store.PromptApproval, Channel: "room", Thread: thread, Requester: "@alice", Agent: "coder",
		ResponseID: "r1", CallID: "c1", Title: "Approval requested", Details: "ship it", ApproveLabel: "Approve",
		DenyLabel: "Deny", Deadline: t0.Add(280 * time.Second)}
}

func newPermissionPrompt(thread, tool string) store.NewPrompt {
	return store.NewPrompt{Kind: store.PromptPermission, Channel: "room", Thread: thread, Requester: "@alice", Agent: "coder",
		ResponseID: "r1", CallID: "c2", ToolName: tool, ToolUseID: "toolu_1",
		MaskedInput: json.RawMessage(`{"cmd": "ls", "env": {"API_TOKEN": "(redacted)"}}`), Deadline: t0.Add(280 * time.Second)}
}

func createPrompt(t *testing.T, s store.Store, p store.NewPrompt) store.Prompt {
	t.Helper()
	got, err := s.CreatePrompt(context.Background(), p)
	if err != nil {
		t.Fatalf("create prompt: %v", err)
	}
	return got
}

// promptAudit returns the prompt's audit entries as "action actor detail", oldest first.
func promptAudit(t *testing.T, s store.Store, id int64) []string {
	t.Helper()
	es, err := s.ListAudit(context.Background(), store.AuditFilter{Subject: store.PromptSubject(id)})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i := len(es) - 1; i >= 0; i-- {
		out = append(out, es[i].Action+" "+es[i].Actor+" "+string(es[i].Detail))
	}
	return out
}

func (cf conformance) testCreatePrompt(t *testing.T) {
	ctx := context.Background()

	t.Run("BothKindsAreKeptAsGivenAndPending", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		for _, np := range []store.NewPrompt{newApprovalPrompt("t1"), newPermissionPrompt("t1", "Bash")} {
			got := createPrompt(t, s, np)
			want := store.Prompt{ID: got.ID, Kind: np.Kind, Channel: np.Channel, Thread: np.Thread, Requester: np.Requester,
				Agent: np.Agent, ResponseID: np.ResponseID, CallID: np.CallID, Title: np.Title, Details: np.Details,
				ApproveLabel: np.ApproveLabel, DenyLabel: np.DenyLabel, ToolName: np.ToolName, ToolUseID: np.ToolUseID,
				Status: store.PromptPending, CreatedAt: t0, Deadline: np.Deadline}
			if np.MaskedInput != nil {
				want.MaskedInput = json.RawMessage(`{"cmd":"ls","env":{"API_TOKEN":"(redacted)"}}`) // compacted
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("created %+v, want %+v", got, want)
			}
			if read, err := s.Prompt(ctx, got.ID); err != nil || !reflect.DeepEqual(read, want) {
				t.Errorf("read %+v (%v), want %+v", read, err, want)
			}
		}
	})

	t.Run("BrokenRulesAreInvalid", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		for name, edit := range map[string]func(*store.NewPrompt){
			"UnknownKind":         func(p *store.NewPrompt) { p.Kind = "vote" },
			"NoChannel":           func(p *store.NewPrompt) { p.Channel = "" },
			"NoDeadline":          func(p *store.NewPrompt) { p.Deadline = time.Time{} },
			"NoDetails":           func(p *store.NewPrompt) { p.Details = "" },
			"NoTitle":             func(p *store.NewPrompt) { p.Title = "" },
			"NoLabel":             func(p *store.NewPrompt) { p.DenyLabel = "" },
			"DetailsTooLong":      func(p *store.NewPrompt) { p.Details = strings.Repeat("é", store.MaxPromptDetails+1) },
			"TitleTooLong":        func(p *store.NewPrompt) { p.Title = strings.Repeat("x", store.MaxPromptTitle+1) },
			"LabelTooLong":        func(p *store.NewPrompt) { p.ApproveLabel = strings.Repeat("x", store.MaxPromptLabel+1) },
			"InvalidUTF8":         func(p *store.NewPrompt) { p.Details = "\xff" },
			"ApprovalWithATool":   func(p *store.NewPrompt) { p.ToolName = "Bash" },
			"ApprovalWithAnInput": func(p *store.NewPrompt) { p.MaskedInput = json.RawMessage(`{}`) },
			"PermissionWithoutATool": func(p *store.NewPrompt) {
				*p = newPermissionPrompt("t1", "")
			},
			"PermissionWithoutInput": func(p *store.NewPrompt) {
				*p = newPermissionPrompt("t1", "Bash")
				p.MaskedInput = nil
			},
			"PermissionWithBrokenInput": func(p *store.NewPrompt) {
				*p = newPermissionPrompt("t1", "Bash")
				p.MaskedInput = json.RawMessage(`{"a":`)
			},
			"PermissionWithATitle": func(p *store.NewPrompt) {
				*p = newPermissionPrompt("t1", "Bash")
				p.Title = "Approval requested"
			},
			"ToolNameTooLong": func(p *store.NewPrompt) {
				*p = newPermissionPrompt("t1", strings.Repeat("x", store.MaxToolName+1))
			},
		} {
			np := newApprovalPrompt("t1")
			edit(&np)
			if _, err := s.CreatePrompt(ctx, np); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if list, err := s.ListPrompts(ctx, store.PromptFilter{}); err != nil || len(list) != 0 {
			t.Errorf("refused prompts were saved: %v (%v)", list, err)
		}
	})

	t.Run("AnUnknownIDIsNotFound", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		if _, err := s.Prompt(ctx, 42); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Prompt(42): %v, want ErrNotFound", err)
		}
		for name, f := range map[string]func() error{
			"decide": func() error { _, err := s.DecidePrompt(ctx, 42, "ada", store.DecisionApprove, ""); return err },
			"expire": func() error { _, err := s.ExpirePrompt(ctx, 42, "gone"); return err },
		} {
			if err := f(); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s 42: %v, want ErrNotFound", name, err)
			}
		}
	})
}

func (cf conformance) testListPrompts(t *testing.T) {
	ctx := context.Background()
	s := cf.open(t, nil, &clock{t: t0})
	a1 := createPrompt(t, s, newApprovalPrompt("t1"))
	p1 := createPrompt(t, s, newPermissionPrompt("t1", "Bash"))
	a2 := createPrompt(t, s, newApprovalPrompt("t2"))
	main := newApprovalPrompt("")
	a3 := createPrompt(t, s, main)
	if _, err := s.DecidePrompt(ctx, a2.ID, "ada", store.DecisionApprove, ""); err != nil {
		t.Fatal(err)
	}
	ids := func(ps []store.Prompt) []int64 {
		out := []int64{}
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	for _, c := range []struct {
		name string
		f    store.PromptFilter
		want []int64
	}{
		{"AllNewestFirst", store.PromptFilter{}, []int64{a3.ID, a2.ID, p1.ID, a1.ID}},
		{"ByStatus", store.PromptFilter{Status: store.PromptPending}, []int64{a3.ID, p1.ID, a1.ID}},
		{"ByKind", store.PromptFilter{Kind: store.PromptPermission}, []int64{p1.ID}},
		{"ByConversation", store.PromptFilter{Channel: "room", Thread: "t1"}, []int64{p1.ID, a1.ID}},
		{"AnEmptyThreadIsTheChannelsMainTimeline", store.PromptFilter{Channel: "room"}, []int64{a3.ID}},
		{"Limited", store.PromptFilter{Limit: 2}, []int64{a3.ID, a2.ID}},
		{"Combined", store.PromptFilter{Status: store.PromptApproved, Kind: store.PromptApproval, Channel: "room", Thread: "t2"}, []int64{a2.ID}},
	} {
		got, err := s.ListPrompts(ctx, c.f)
		if err != nil || !reflect.DeepEqual(ids(got), c.want) {
			t.Errorf("%s: %v (%v), want %v", c.name, ids(got), err, c.want)
		}
	}
	for name, f := range map[string]store.PromptFilter{
		"LimitTooLarge": {Limit: 1001}, "NegativeLimit": {Limit: -1},
		"UnknownStatus": {Status: "lost"}, "UnknownKind": {Kind: "vote"},
	} {
		if _, err := s.ListPrompts(ctx, f); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func (cf conformance) testPromptDecisions(t *testing.T) {
	ctx := context.Background()

	t.Run("APromptPastItsDeadlineCannotBeDecidedEvenWhenStillPending", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		p := createPrompt(t, s, newPermissionPrompt("t1", "Bash"))
		clk.Set(p.Deadline.Add(-time.Nanosecond))
		if _, err := s.DecidePrompt(ctx, p.ID, "ada", store.DecisionAllowOnce, ""); err != nil {
			t.Fatalf("decision just before the deadline: %v", err)
		}
		late := createPrompt(t, s, newPermissionPrompt("t2", "Bash"))
		clk.Set(late.Deadline)
		if _, err := s.DecidePrompt(ctx, late.ID, "ada", store.DecisionAllowConversation, ""); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("decision at the deadline: %v, want ErrConflict", err)
		}
		if _, allowed, err := s.UsePermissionAllowance(ctx, store.PermissionUse{Channel: "room", Thread: "t2", ToolName: "Bash",
			Agent: "coder", ResponseID: "r1", CallID: "c3"}); err != nil || allowed {
			t.Fatalf("a refused late decision granted an allowance: %v %v", allowed, err)
		}
	})

	t.Run("ADecisionIsACompareAndSwapWithItsAuditEntry", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		p := createPrompt(t, s, newApprovalPrompt("t1"))
		clk.Set(t0.Add(time.Minute))
		got, err := s.DecidePrompt(ctx, p.ID, "ada", store.DecisionApprove, "")
		if err != nil {
			t.Fatal(err)
		}
		want := p
		want.Status, want.Decision, want.DecidedBy, want.DecidedAt = store.PromptApproved, store.DecisionApprove, "ada", t0.Add(time.Minute)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decided %+v, want %+v", got, want)
		}
		for name, replay := range map[string]func() error{
			"approve": func() error { _, err := s.DecidePrompt(ctx, p.ID, "bob", store.DecisionApprove, ""); return err },
			"deny":    func() error { _, err := s.DecidePrompt(ctx, p.ID, "bob", store.DecisionDeny, "no"); return err },
			"expire":  func() error { _, err := s.ExpirePrompt(ctx, p.ID, "Nobody decided."); return err },
		} {
			if err := replay(); !errors.Is(err, store.ErrConflict) {
				t.Errorf("%s after approve: %v, want ErrConflict", name, err)
			}
		}
		if read, _ := s.Prompt(ctx, p.ID); !reflect.DeepEqual(read, want) {
			t.Errorf("after refused changes %+v, want %+v", read, want)
		}
		wantAudit := []string{fmt.Sprintf(`prompt.decide ada {"decision":"approve","feedback":"","kind":"approval","prompt":%d}`, p.ID)}
		if got := promptAudit(t, s, p.ID); !reflect.DeepEqual(got, wantAudit) {
			t.Errorf("audit %q, want %q", got, wantAudit)
		}
	})

	t.Run("DenyAndCommentEndItNotApprovedWithTheirText", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		for decision, text := range map[string]string{store.DecisionDeny: "not today", store.DecisionComment: "split it in two"} {
			p := createPrompt(t, s, newApprovalPrompt("t1"))
			got, err := s.DecidePrompt(ctx, p.ID, "mia", decision, text)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != store.PromptDenied || got.Decision != decision || got.Feedback != text || got.DecidedBy != "mia" {
				t.Errorf("%s: %+v", decision, got)
			}
		}
	})

	t.Run("ADecisionOfTheOtherKindOrWithoutActorIsInvalidAndChangesNothing", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		ap := createPrompt(t, s, newApprovalPrompt("t1"))
		pp := createPrompt(t, s, newPermissionPrompt("t1", "Bash"))
		for _, c := range []struct {
			id              int64
			actor, decision string
			feedback        string
		}{
			{ap.ID, "ada", store.DecisionAllowOnce, ""}, {ap.ID, "ada", "maybe", ""},
			{pp.ID, "ada", store.DecisionApprove, ""}, {pp.ID, "ada", store.DecisionComment, "x"},
			{ap.ID, "", store.DecisionApprove, ""}, {ap.ID, "ada", store.DecisionDeny, strings.Repeat("x", store.MaxPromptText+1)},
		} {
			if _, err := s.DecidePrompt(ctx, c.id, c.actor, c.decision, c.feedback); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("decide %d %q by %q: %v, want ErrInvalid", c.id, c.decision, c.actor, err)
			}
		}
		for _, id := range []int64{ap.ID, pp.ID} {
			if read, _ := s.Prompt(ctx, id); read.Status != store.PromptPending {
				t.Errorf("prompt %d is %s after invalid decisions", id, read.Status)
			}
		}
	})

	t.Run("ExpiryIsFinalAndSaysWhy", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		p := createPrompt(t, s, newPermissionPrompt("t1", "Bash"))
		clk.Set(t0.Add(280 * time.Second))
		got, err := s.ExpirePrompt(ctx, p.ID, "Nobody decided within 280 seconds.")
		if err != nil {
			t.Fatal(err)
		}
		want := p
		want.Status, want.DecidedAt, want.Feedback = store.PromptExpired, t0.Add(280*time.Second), "Nobody decided within 280 seconds."
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("expired %+v, want %+v", got, want)
		}
		if _, err := s.DecidePrompt(ctx, p.ID, "ada", store.DecisionAllowOnce, ""); !errors.Is(err, store.ErrConflict) {
			t.Errorf("decide after expiry: %v, want ErrConflict", err)
		}
		if _, err := s.ExpirePrompt(ctx, p.ID, "again"); !errors.Is(err, store.ErrConflict) {
			t.Errorf("expire twice: %v, want ErrConflict", err)
		}
		if _, err := s.ExpirePrompt(ctx, p.ID, ""); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("expire without reason: %v, want ErrInvalid", err)
		}
		wantAudit := []string{fmt.Sprintf(`prompt.expire primary {"kind":"permission","prompt":%d,"reason":"Nobody decided within 280 seconds."}`, p.ID)}
		if got := promptAudit(t, s, p.ID); !reflect.DeepEqual(got, wantAudit) {
			t.Errorf("audit %q, want %q", got, wantAudit)
		}
	})

	t.Run("RacingDecisionsHaveOneWinner", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		p := createPrompt(t, s, newApprovalPrompt("t1"))
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				if i == 0 {
					_, errs[i] = s.ExpirePrompt(ctx, p.ID, "Nobody decided.")
					return
				}
				_, errs[i] = s.DecidePrompt(ctx, p.ID, fmt.Sprintf("op%d", i), store.DecisionApprove, "")
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("a losing change failed with %v, want ErrConflict", err)
			}
		}
		if won != 1 || len(promptAudit(t, s, p.ID)) != 1 {
			t.Errorf("%d changes won with %d audit entries; want exactly one", won, len(promptAudit(t, s, p.ID)))
		}
	})
}

func (cf conformance) testPermissionAllowances(t *testing.T) {
	ctx := context.Background()
	use := func(thread, tool string) store.PermissionUse {
		return store.PermissionUse{Channel: "room", Thread: thread, ToolName: tool, Agent: "coder", ResponseID: "r2", CallID: "c9", ToolUseID: "toolu_9"}
	}
	allowed := func(t *testing.T, s store.Store, u store.PermissionUse) (store.PermissionAllowance, bool) {
		t.Helper()
		a, ok, err := s.UsePermissionAllowance(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		return a, ok
	}

	t.Run("NothingIsAllowedUntilSomeoneAllowsIt", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		if _, ok := allowed(t, s, use("t1", "Bash")); ok {
			t.Fatal("allowed with an empty allow-list")
		}
		if es, _ := s.ListAudit(ctx, store.AuditFilter{Action: store.ActionPermissionAutoAllow}); len(es) != 0 {
			t.Errorf("a refused use was audited: %v", es)
		}
		if _, _, err := s.UsePermissionAllowance(ctx, store.PermissionUse{Channel: "room"}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("a use without a tool: %v, want ErrInvalid", err)
		}
	})

	t.Run("AnAllowanceCoversItsToolInItsConversationOnlyAndEachUseIsAudited", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		p := createPrompt(t, s, newPermissionPrompt("t1", "Bash"))
		if _, err := s.DecidePrompt(ctx, p.ID, "mia", store.DecisionAllowThread, ""); err != nil {
			t.Fatal(err)
		}
		a, ok := allowed(t, s, use("t1", "Bash"))
		want := store.PermissionAllowance{Channel: "room", Thread: "t1", ToolName: "Bash", Scope: store.AllowThread,
			GrantedBy: "mia", GrantedAt: t0, PromptID: p.ID}
		if !ok || !reflect.DeepEqual(a, want) {
			t.Fatalf("allowance %+v (%v), want %+v", a, ok, want)
		}
		for _, u := range []store.PermissionUse{use("t2", "Bash"), use("t1", "Read"), use("t1", "bash")} {
			if _, ok := allowed(t, s, u); ok {
				t.Errorf("%+v allowed by an allowance for Bash in t1", u)
			}
		}
		es, err := s.ListAudit(ctx, store.AuditFilter{Action: store.ActionPermissionAutoAllow})
		if err != nil || len(es) != 1 {
			t.Fatalf("auto-allow audit %v (%v), want one entry", es, err)
		}
		wantDetail := fmt.Sprintf(`{"agent":"coder","call_id":"c9","granted_by":"mia","granted_by_prompt":%d,"response_id":"r2","scope":"thread","tool_name":"Bash","tool_use_id":"toolu_9"}`, p.ID)
		if es[0].Actor != "primary" || es[0].Subject != store.ConversationSubject("room", "t1") || string(es[0].Detail) != wantDetail {
			t.Errorf("auto-allow audit %+v, detail %s; want %s", es[0], es[0].Detail, wantDetail)
		}
		wantDecide := fmt.Sprintf(`prompt.decide mia {"decision":"allow_thread","feedback":"","kind":"permission","prompt":%d,"tool_name":"Bash"}`, p.ID)
		if got := promptAudit(t, s, p.ID); !reflect.DeepEqual(got, []string{wantDecide}) {
			t.Errorf("decision audit %q, want %q", got, wantDecide)
		}
	})

	t.Run("AnAllowanceAnswersOnlyTheAgentWhoseRequestWasAllowed", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		for _, d := range []string{store.DecisionAllowThread, store.DecisionAllowConversation} {
			p := createPrompt(t, s, newPermissionPrompt("t1", "Bash")) // coder's request
			if _, err := s.DecidePrompt(ctx, p.ID, "mia", d, ""); err != nil {
				t.Fatal(err)
			}
		}
		other := use("t1", "Bash")
		other.Agent = "intruder"
		if a, ok := allowed(t, s, other); ok {
			t.Fatalf("another agent of the conversation was allowed by %+v", a)
		}
		if a, ok := allowed(t, s, use("t1", "Bash")); !ok || a.Scope != store.AllowConversation {
			t.Fatalf("the allowed agent got %+v (%v), want its conversation-scoped allowance", a, ok)
		}
	})

	t.Run("AllowOnceAndDenyGrantNothing", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		for _, d := range []string{store.DecisionAllowOnce, store.DecisionDeny} {
			p := createPrompt(t, s, newPermissionPrompt("t1", "Bash"))
			if _, err := s.DecidePrompt(ctx, p.ID, "ada", d, ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok := allowed(t, s, use("t1", "Bash")); ok {
			t.Fatal("allow_once or deny left an allowance")
		}
	})

	t.Run("AtBootPendingPromptsExpireThreadAllowancesEndAndConversationAllowancesStay", func(t *testing.T) {
		dir := cf.newHarness(t)
		clk := &clock{t: t0}
		s := cf.open(t, dir, clk)
		pending := createPrompt(t, s, newApprovalPrompt("t1"))
		decided := createPrompt(t, s, newApprovalPrompt("t1"))
		if _, err := s.DecidePrompt(ctx, decided.ID, "ada", store.DecisionDeny, "no"); err != nil {
			t.Fatal(err)
		}
		byThread := createPrompt(t, s, newPermissionPrompt("t1", "Bash"))
		if _, err := s.DecidePrompt(ctx, byThread.ID, "mia", store.DecisionAllowThread, ""); err != nil {
			t.Fatal(err)
		}
		byConversation := createPrompt(t, s, newPermissionPrompt("t1", "Edit"))
		if _, err := s.DecidePrompt(ctx, byConversation.ID, "ada", store.DecisionAllowConversation, ""); err != nil {
			t.Fatal(err)
		}
		pendingPermission := createPrompt(t, s, newPermissionPrompt("t2", "Bash"))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		clk.Set(t0.Add(time.Hour))
		s2 := cf.open(t, dir, clk) // the restart: the same storage, a new store
		expired, err := s2.ExpirePendingPrompts(ctx, store.PromptRestartReason)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, p := range expired {
			got = append(got, p.ID)
			if p.Status != store.PromptExpired || p.Feedback != store.PromptRestartReason || !p.DecidedAt.Equal(t0.Add(time.Hour)) {
				t.Errorf("returned %+v", p)
			}
			if read, _ := s2.Prompt(ctx, p.ID); !reflect.DeepEqual(read, p) {
				t.Errorf("stored %+v, returned %+v", read, p)
			}
			if _, err := s2.DecidePrompt(ctx, p.ID, "ada", store.DecisionDeny, ""); !errors.Is(err, store.ErrConflict) {
				t.Errorf("deciding %d after the restart: %v, want ErrConflict", p.ID, err)
			}
		}
		if want := []int64{pendingPermission.ID, pending.ID}; !reflect.DeepEqual(got, want) {
			t.Errorf("expired %v, want %v (newest first)", got, want)
		}
		if read, _ := s2.Prompt(ctx, decided.ID); read.Status != store.PromptDenied {
			t.Errorf("a decided prompt became %s", read.Status)
		}
		if _, ok := allowed(t, s2, use("t1", "Bash")); ok {
			t.Error("a thread allowance outlived the primary that granted it")
		}
		if a, ok := allowed(t, s2, use("t1", "Edit")); !ok || a.Scope != store.AllowConversation {
			t.Errorf("the conversation allowance is gone: %+v %v", a, ok)
		}
		if again, err := s2.ExpirePendingPrompts(ctx, store.PromptRestartReason); err != nil || len(again) != 0 {
			t.Errorf("second call expired %v (%v), want none", again, err)
		}
	})

	t.Run("AConversationAllowanceIsUsedBeforeAThreadOne", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		for _, d := range []string{store.DecisionAllowThread, store.DecisionAllowConversation} {
			p := createPrompt(t, s, newPermissionPrompt("t1", "Bash"))
			if _, err := s.DecidePrompt(ctx, p.ID, "ada", d, ""); err != nil {
				t.Fatal(err)
			}
		}
		if a, ok := allowed(t, s, use("t1", "Bash")); !ok || a.Scope != store.AllowConversation {
			t.Errorf("used %+v, want the conversation allowance", a)
		}
	})
}

func (cf conformance) testListAndRevokePermissionAllowances(t *testing.T) {
	ctx := context.Background()
	s := cf.open(t, nil, &clock{t: t0})
	for _, tc := range []struct{ thread, tool, decision string }{
		{"t1", "Bash", store.DecisionAllowConversation}, {"t1", "Read", store.DecisionAllowThread}, {"t2", "Bash", store.DecisionAllowConversation},
	} {
		p := createPrompt(t, s, newPermissionPrompt(tc.thread, tc.tool))
		if _, err := s.DecidePrompt(ctx, p.ID, "ada", tc.decision, ""); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.ListPermissionAllowances(ctx, store.AllowanceFilter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("all allowances: %+v, %v", all, err)
	}
	t1, err := s.ListPermissionAllowances(ctx, store.AllowanceFilter{Channel: "room", Thread: "t1"})
	if err != nil || len(t1) != 2 {
		t.Fatalf("allowances of t1: %+v, %v", t1, err)
	}
	bash := store.PermissionAllowance{Channel: "room", Thread: "t1", ToolName: "Bash", Scope: "conversation"}
	if err := s.RevokePermissionAllowance(ctx, bash, "root"); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokePermissionAllowance(ctx, bash, "root"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking twice: %v, want ErrNotFound", err)
	}
	if _, allowed, err := s.UsePermissionAllowance(ctx, store.PermissionUse{Channel: "room", Thread: "t1", ToolName: "Bash"}); err != nil || allowed {
		t.Fatalf("a revoked allowance still allows: %v %v", allowed, err)
	}
	audit, err := s.ListAudit(ctx, store.AuditFilter{Action: store.ActionPermissionRevoke})
	if err != nil || len(audit) != 1 || audit[0].Actor != "root" || !strings.Contains(string(audit[0].Detail), `"granted_by":"ada"`) {
		t.Fatalf("revoke audit %+v, %v", audit, err)
	}
}
