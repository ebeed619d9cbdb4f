package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// countingDriver counts the transactions the store asks of a real driver, to show that a
// refused argument never reaches it.
type countingDriver struct {
	store.Driver
	updates atomic.Int64
}

func (d *countingDriver) Update(ctx context.Context, f func(store.Tx) error) error {
	d.updates.Add(1)
	return d.Driver.Update(ctx, f)
}

func openStore(t *testing.T) (store.Store, *countingDriver) {
	t.Helper()
	d, err := sqlite.OpenDriver(context.Background(), filepath.Join(t.TempDir(), sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cd := &countingDriver{Driver: d}
	s := store.New(cd, store.Options{})
	t.Cleanup(func() { s.Close() })
	return s, cd
}

// limitCase is one argument at a limit. prepare makes what the call needs and returns it.
type limitCase struct {
	name    string
	valid   bool
	prepare func(t *testing.T, s store.Store) func() error
}

func runLimits(t *testing.T, cases []limitCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, d := openStore(t)
			call := tc.prepare(t, s)
			before := d.updates.Load()
			err := call()
			switch {
			case tc.valid && err != nil:
				t.Fatalf("refused: %v", err)
			case !tc.valid && !errors.Is(err, store.ErrInvalid):
				t.Fatalf("err = %v, want ErrInvalid", err)
			case !tc.valid && d.updates.Load() != before:
				t.Fatal("a refused argument reached the driver")
			}
		})
	}
}

var ctx = context.Background()

// must returns v, failing the test on err.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func pendingApproval(t *testing.T, s store.Store) store.Approval {
	t.Helper()
	ap, _, err := s.SaveApproval(ctx, store.NewApproval{Kind: "command", Channel: "room", Command: "make", Workdir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

func pendingPrompt(t *testing.T, s store.Store) store.Prompt {
	t.Helper()
	return must(s.CreatePrompt(ctx, store.NewPrompt{Kind: store.PromptApproval, Channel: "room", Title: "T",
		Details: "D", ApproveLabel: "Yes", DenyLabel: "No", Deadline: time.Now().Add(time.Hour)}))(t)
}

const callID = "0b5e7c1a-3a4f-4d6e-9b8a-1c2d3e4f5a6b"

func newCall() store.NewCallApproval {
	return store.NewCallApproval{CallID: callID, Toolkit: "files", Function: "write", Arguments: `{}`,
		ResponseID: "resp-1", Agent: "code"}
}

// claimedCall is a call approval that may be finished.
func claimedCall(t *testing.T, s store.Store) store.CallApproval {
	t.Helper()
	c := must(s.SaveCallApproval(ctx, newCall()))(t)
	must(s.ApproveCallApproval(ctx, c.ID, "admin"))(t)
	return must(s.ClaimCallApproval(ctx, c.ID))(t)
}

// text is n copies of r.
func text(n int, r string) string { return strings.Repeat(r, n) }

func TestContinuationLimits(t *testing.T) {
	enqueue := func(c store.NewContinuation) func(*testing.T, store.Store) func() error {
		return func(_ *testing.T, s store.Store) func() error {
			return func() error { _, _, err := s.EnqueueContinuation(ctx, c); return err }
		}
	}
	c := func(key string, checkpoint int) store.NewContinuation {
		return store.NewContinuation{IdempotencyKey: key, Channel: "room", Text: "x", Checkpoint: make([]byte, checkpoint)}
	}
	runLimits(t, []limitCase{
		{"AKeyOfMaxBytesIsKept", true, enqueue(c(text(store.MaxIdempotencyKey, "k"), 0))},
		{"AKeyOneByteOverIsRefused", false, enqueue(c(text(store.MaxIdempotencyKey+1, "k"), 0))},
		{"AnEmptyKeyIsRefused", false, enqueue(c("", 0))},
		{"ACheckpointOfMaxBytesIsKept", true, enqueue(c("k", store.MaxCheckpoint))},
		{"ACheckpointOneByteOverIsRefused", false, enqueue(c("k", store.MaxCheckpoint+1))},
		{"NoChannelIsRefused", false, enqueue(store.NewContinuation{IdempotencyKey: "k", Text: "x"})},
		{"NoTextIsRefused", false, enqueue(store.NewContinuation{IdempotencyKey: "k", Channel: "room"})},
	})
}

func TestListLimits(t *testing.T) {
	list := func(limit int) func(*testing.T, store.Store) func() error {
		return func(_ *testing.T, s store.Store) func() error {
			return func() error {
				_, errA := s.ListAudit(ctx, store.AuditFilter{Limit: limit})
				_, errB := s.ListApprovals(ctx, store.ApprovalFilter{Limit: limit})
				_, errC := s.ListCallApprovals(ctx, store.CallApprovalFilter{Limit: limit})
				_, errD := s.ListPrompts(ctx, store.PromptFilter{Limit: limit})
				_, errE := s.ListQuestionRequests(ctx, store.QuestionFilter{Limit: limit})
				_, errF := s.ListProgress(ctx, store.ProgressFilter{Limit: limit})
				errs := []error{errA, errB, errC, errD, errE, errF}
				for _, err := range errs[1:] {
					if (err == nil) != (errA == nil) {
						return errors.New("the lists disagree on the limit")
					}
				}
				return errA
			}
		}
	}
	runLimits(t, []limitCase{
		{"ZeroMeansTheDefault", true, list(0)},
		{"AThousandRowsMayBeAsked", true, list(1000)},
		{"OneOverAThousandIsRefused", false, list(1001)},
		{"ANegativeLimitIsRefused", false, list(-1)},
	})
	t.Run("PendingContinuationsNeedAPositiveLimit", func(t *testing.T) {
		s, _ := openStore(t)
		if _, err := s.PendingContinuations(ctx, 0, 0); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("limit 0: %v, want ErrInvalid", err)
		}
	})
}

func TestApprovalTextLimits(t *testing.T) {
	comment := func(c string) func(*testing.T, store.Store) func() error {
		return func(t *testing.T, s store.Store) func() error {
			ap := pendingApproval(t, s)
			return func() error { _, err := s.CommentApproval(ctx, ap.ID, "bob", c); return err }
		}
	}
	deny := func(reason string) func(*testing.T, store.Store) func() error {
		return func(t *testing.T, s store.Store) func() error {
			ap := pendingApproval(t, s)
			return func() error { _, err := s.DenyApproval(ctx, ap.ID, "bob", reason); return err }
		}
	}
	runLimits(t, []limitCase{
		// Bytes, not characters: 1000 two-byte runes are at the limit.
		{"ACommentOfMaxBytesIsKept", true, comment(text(store.MaxApprovalComment/2, "é"))},
		{"ACommentOneByteOverIsRefused", false, comment(text(store.MaxApprovalComment, "x") + "y")},
		{"AnEmptyCommentIsRefused", false, comment("")},
		{"ACommentOfBrokenUTF8IsRefused", false, comment("\xff")},
		{"AnEmptyDenyReasonIsKept", true, deny("")},
		{"ADenyReasonOfMaxBytesIsKept", true, deny(text(store.MaxApprovalComment, "x"))},
		{"ADenyReasonOneByteOverIsRefused", false, deny(text(store.MaxApprovalComment+1, "x"))},
	})
}

func TestPromptTextLimits(t *testing.T) {
	create := func(change func(*store.NewPrompt)) func(*testing.T, store.Store) func() error {
		return func(_ *testing.T, s store.Store) func() error {
			p := store.NewPrompt{Kind: store.PromptApproval, Channel: "room", Title: "T", Details: "D",
				ApproveLabel: "Yes", DenyLabel: "No", Deadline: time.Now().Add(time.Hour)}
			change(&p)
			return func() error { _, err := s.CreatePrompt(ctx, p); return err }
		}
	}
	permission := func(tool string) func(*testing.T, store.Store) func() error {
		return create(func(p *store.NewPrompt) {
			*p = store.NewPrompt{Kind: store.PromptPermission, Channel: "room", ToolName: tool,
				MaskedInput: json.RawMessage(`{}`), Deadline: p.Deadline}
		})
	}
	feedback := func(f string) func(*testing.T, store.Store) func() error {
		return func(t *testing.T, s store.Store) func() error {
			p := pendingPrompt(t, s)
			return func() error { _, err := s.DecidePrompt(ctx, p.ID, "ada", store.DecisionDeny, f); return err }
		}
	}
	// Characters, not bytes: each limit is met with two-byte runes.
	runLimits(t, []limitCase{
		{"ATitleOfMaxCharactersIsKept", true, create(func(p *store.NewPrompt) { p.Title = text(store.MaxPromptTitle, "é") })},
		{"ATitleOneCharacterOverIsRefused", false, create(func(p *store.NewPrompt) { p.Title = text(store.MaxPromptTitle+1, "é") })},
		{"DetailsOfMaxCharactersAreKept", true, create(func(p *store.NewPrompt) { p.Details = text(store.MaxPromptDetails, "é") })},
		{"DetailsOneCharacterOverAreRefused", false, create(func(p *store.NewPrompt) { p.Details = text(store.MaxPromptDetails+1, "é") })},
		{"ALabelOfMaxCharactersIsKept", true, create(func(p *store.NewPrompt) { p.DenyLabel = text(store.MaxPromptLabel, "é") })},
		{"ALabelOneCharacterOverIsRefused", false, create(func(p *store.NewPrompt) { p.ApproveLabel = text(store.MaxPromptLabel+1, "é") })},
		{"AnApprovalWithoutATitleIsRefused", false, create(func(p *store.NewPrompt) { p.Title = "" })},
		{"AnApprovalWithAToolIsRefused", false, create(func(p *store.NewPrompt) { p.ToolName = "Bash" })},
		{"NoDeadlineIsRefused", false, create(func(p *store.NewPrompt) { p.Deadline = time.Time{} })},
		{"AnUnknownKindIsRefused", false, create(func(p *store.NewPrompt) { p.Kind = "vote" })},
		{"AToolNameOfMaxCharactersIsKept", true, permission(text(store.MaxToolName, "é"))},
		{"AToolNameOneCharacterOverIsRefused", false, permission(text(store.MaxToolName+1, "é"))},
		{"FeedbackOfMaxCharactersIsKept", true, feedback(text(store.MaxPromptText, "é"))},
		{"FeedbackOneCharacterOverIsRefused", false, feedback(text(store.MaxPromptText+1, "é"))},
	})
}

func TestCallApprovalLimits(t *testing.T) {
	save := func(change func(*store.NewCallApproval)) func(*testing.T, store.Store) func() error {
		return func(_ *testing.T, s store.Store) func() error {
			c := newCall()
			change(&c)
			return func() error { _, err := s.SaveCallApproval(ctx, c); return err }
		}
	}
	// args is a JSON object of exactly n bytes.
	args := func(n int) string { return `{"a":"` + text(n-8, "x") + `"}` }
	finish := func(res store.CallResult) func(*testing.T, store.Store) func() error {
		return func(t *testing.T, s store.Store) func() error {
			c := claimedCall(t, s)
			return func() error { _, err := s.FinishCallApproval(ctx, c.ID, store.CallApprovalDone, res); return err }
		}
	}
	runLimits(t, []limitCase{
		{"ArgumentsOfMaxBytesAreKept", true, save(func(c *store.NewCallApproval) { c.Arguments = args(store.MaxCallArguments) })},
		{"ArgumentsOneByteOverAreRefused", false, save(func(c *store.NewCallApproval) { c.Arguments = args(store.MaxCallArguments + 1) })},
		{"ArgumentsThatAreNotAnObjectAreRefused", false, save(func(c *store.NewCallApproval) { c.Arguments = `[1]` })},
		{"ANameOf1024BytesIsKept", true, save(func(c *store.NewCallApproval) { c.Toolkit = text(1024, "t") })},
		{"ANameOneByteOverIsRefused", false, save(func(c *store.NewCallApproval) { c.Channel = text(1025, "c") })},
		{"ACheckpointOfMaxBytesIsKept", true, save(func(c *store.NewCallApproval) { c.Checkpoint = make([]byte, store.MaxCheckpoint) })},
		{"ACheckpointOneByteOverIsRefused", false, save(func(c *store.NewCallApproval) { c.Checkpoint = make([]byte, store.MaxCheckpoint+1) })},
		{"AnUppercaseCallIDIsRefused", false, save(func(c *store.NewCallApproval) { c.CallID = strings.ToUpper(callID) })},
		{"NoAgentIsRefused", false, save(func(c *store.NewCallApproval) { c.Agent = "" })},
		{"AnOutcomeOfMaxBytesIsKept", true, finish(store.CallResult{Status: "completed", Outcome: text(store.MaxCallOutcome, "o")})},
		{"AnOutcomeOneByteOverIsRefused", false, finish(store.CallResult{Status: "completed", Outcome: text(store.MaxCallOutcome+1, "o")})},
		{"AnUnknownResultStatusIsRefused", false, finish(store.CallResult{Status: "done"})},
	})
}

func TestEnumsAndRequiredFields(t *testing.T) {
	call := func(f func(s store.Store) error) func(*testing.T, store.Store) func() error {
		return func(_ *testing.T, s store.Store) func() error { return func() error { return f(s) } }
	}
	runLimits(t, []limitCase{
		{"EveryConversationModeIsKept", true, call(func(s store.Store) error {
			for _, m := range []store.Mode{store.ModeAsk, store.ModeAuto, store.ModeAdmin} {
				if _, err := s.SetConversationMode(ctx, "room", "", m, "a"); err != nil {
					return err
				}
			}
			return nil
		})},
		{"AnUnknownConversationModeIsRefused", false, call(func(s store.Store) error {
			_, err := s.SetConversationMode(ctx, "room", "", "yolo", "a")
			return err
		})},
		{"AnUnknownShellModeIsRefused", false, call(func(s store.Store) error {
			_, err := s.SetShellMode(ctx, "room", "", "code", "max", "", "a")
			return err
		})},
		{"AShellModeWithoutAnAgentIsRefused", false, call(func(s store.Store) error {
			_, err := s.ResetShellMode(ctx, "room", "", "", "a")
			return err
		})},
		{"AnUnknownOperatorRoleIsRefused", false, call(func(s store.Store) error {
			_, err := s.CreateOperator(ctx, store.NewOperator{Name: "ann", Role: "owner", Digest: [32]byte{1}})
			return err
		})},
		{"AnOperatorWithoutADigestIsRefused", false, call(func(s store.Store) error {
			_, err := s.CreateOperator(ctx, store.NewOperator{Name: "ann", Role: store.RoleAdmin})
			return err
		})},
		{"AnOperatorNameOf64CharactersIsKept", true, call(func(s store.Store) error {
			_, err := s.CreateOperator(ctx, store.NewOperator{Name: text(64, "a"), Role: store.RoleAdmin, Digest: [32]byte{1}})
			return err
		})},
		{"AJobOfAnUnknownKindIsRefused", false, call(func(s store.Store) error {
			_, err := s.CreateJob(ctx, store.NewJob{Kind: "cron", Command: "x", Channel: "room", LogDir: "/l"}, store.JobCaps{})
			return err
		})},
		{"AJobWithANegativeCeilingIsRefused", false, call(func(s store.Store) error {
			_, err := s.CreateJob(ctx, store.NewJob{Kind: "command", Command: "x", Channel: "room", LogDir: "/l", Ceiling: -1}, store.JobCaps{})
			return err
		})},
		{"AnUnknownApprovalStatusFilterIsRefused", false, call(func(s store.Store) error {
			_, err := s.ListApprovals(ctx, store.ApprovalFilter{Status: "approved"})
			return err
		})},
		{"AnApprovalSettledAsDeniedIsRefused", false, call(func(s store.Store) error {
			_, err := s.SettleApproval(ctx, 1, store.ApprovalDenied, "")
			return err
		})},
		{"ACallFinishedAsDeniedIsRefused", false, call(func(s store.Store) error {
			_, err := s.FinishCallApproval(ctx, 1, store.CallApprovalDenied, store.CallResult{Status: "completed"})
			return err
		})},
		{"AQuestionPresentationMustBeKnown", false, call(func(s store.Store) error {
			_, _, err := s.SaveQuestionRequest(ctx, store.NewQuestionRequest{Channel: "room", Thread: "t", Requester: "@a",
				Title: "T", Presentation: "popup", Questions: json.RawMessage(`[{}]`)})
			return err
		})},
		{"AnAuditDetailMustBeAnObject", false, call(func(s store.Store) error {
			_, err := s.AppendAudit(ctx, store.NewAuditEntry{Actor: "a", Action: "b", Detail: json.RawMessage(`[]`)})
			return err
		})},
		{"AProgressSnapshotNeedsAStep", false, call(func(s store.Store) error {
			return s.SaveProgress(ctx, store.ProgressSnapshot{ResponseID: "r", Channel: "room", Title: "T", Steps: json.RawMessage(`[]`)})
		})},
	})
}

func TestOperatorNames(t *testing.T) {
	for name, valid := range map[string]bool{
		"alice": true, "@alice:example.org": true, "bot=1+2": true, "a": true, text(128, "a"): true,
		"": false, text(129, "a"): false, ".alice": false, "al ice": false, "al/ice": false, "ålice": false,
	} {
		if got := store.ValidOperatorName(name); got != valid {
			t.Errorf("ValidOperatorName(%q) = %v, want %v", name, got, valid)
		}
	}
}
