package operator_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
)

// fakePreflight reports the same problems every time and remembers what it checked.
type fakePreflight struct {
	mu       sync.Mutex
	problems []shellmode.Problem
	checked  []shellmode.Target
}

func (f *fakePreflight) Check(_ context.Context, t shellmode.Target) []shellmode.Problem {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checked = append(f.checked, t)
	return f.problems
}

func (f *fakePreflight) targets() []shellmode.Target {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]shellmode.Target(nil), f.checked...)
}

var twoProblems = []shellmode.Problem{
	{Check: "worker", What: `no worker with key "gpu" is connected`, Fix: `start a mindroom-worker with key "gpu"`},
	{Check: "workspace", What: "the workspace is not writable", Fix: "give the primary write permission"},
}

func TestShellModes(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)
	pf := e.preflight
	conv := &conversationv1.Conversation{Channel: "room", Thread: "t1"}
	get := func(t *testing.T) *operatorv1.ShellModeSetting {
		t.Helper()
		got, err := e.member.GetShellMode(ctx, &operatorv1.GetShellModeRequest{Conversation: conv, AgentName: "code"})
		if err != nil {
			t.Fatal(err)
		}
		return got.GetSetting()
	}

	t.Run("AnAgentNeverSetShowsStandardWithNoSetter", func(t *testing.T) {
		if s := get(t); s.GetMode() != operatorv1.ShellMode_SHELL_MODE_STANDARD || s.GetUpdatedBy() != "" || s.GetUpdatedAt() != nil {
			t.Fatalf("setting %v", s)
		}
	})

	t.Run("MinimalWithProblemsReturnsEveryProblemAndSavesNothing", func(t *testing.T) {
		pf.problems = twoProblems
		defer func() { pf.problems = nil }()
		_, err := e.admin.SetShellMode(ctx, &operatorv1.SetShellModeRequest{
			Conversation: conv, AgentName: "code", Mode: operatorv1.ShellMode_SHELL_MODE_MINIMAL, WorkerKey: "gpu",
		})
		wantCode(t, "SetShellMode", err, codes.FailedPrecondition)
		st := status.Convert(err)
		for _, p := range twoProblems {
			if !strings.Contains(st.Message(), p.What) || !strings.Contains(st.Message(), p.Fix) {
				t.Errorf("message %q lacks %q or its fix", st.Message(), p.What)
			}
		}
		var violations []*errdetails.PreconditionFailure_Violation
		for _, d := range st.Details() {
			if pf, ok := d.(*errdetails.PreconditionFailure); ok {
				violations = append(violations, pf.GetViolations()...)
			}
		}
		if len(violations) != 2 || violations[0].GetType() != "worker" || violations[1].GetType() != "workspace" ||
			!strings.Contains(violations[1].GetDescription(), "Fix: give the primary write permission") {
			t.Fatalf("violations %v", violations)
		}
		if targets := pf.targets(); !reflect.DeepEqual(targets[len(targets)-1], shellmode.Target{Agent: "code", Channel: "room", Thread: "t1", WorkerKey: "gpu"}) {
			t.Fatalf("checked %+v", targets)
		}
		if s := get(t); s.GetMode() != operatorv1.ShellMode_SHELL_MODE_STANDARD || s.GetUpdatedBy() != "" {
			t.Fatalf("a refused mode was saved: %v", s)
		}
		if entries, _ := e.store.ListAudit(ctx, store.AuditFilter{Subject: store.ShellModeSubject("room", "t1", "code")}); len(entries) != 0 {
			t.Fatalf("a refused mode was audited: %+v", entries)
		}
	})

	t.Run("MinimalWithoutProblemsIsSavedAndAuditedNamingTheAdmin", func(t *testing.T) {
		set, err := e.admin.SetShellMode(ctx, &operatorv1.SetShellModeRequest{Conversation: conv, AgentName: "code", Mode: operatorv1.ShellMode_SHELL_MODE_MINIMAL})
		if err != nil {
			t.Fatal(err)
		}
		if s := get(t); s.GetMode() != operatorv1.ShellMode_SHELL_MODE_MINIMAL || s.GetUpdatedBy() != "ada" || s.GetUpdatedAt() == nil ||
			set.GetSetting().GetMode() != operatorv1.ShellMode_SHELL_MODE_MINIMAL {
			t.Fatalf("setting %v (returned %v)", s, set)
		}
		entries, err := e.store.ListAudit(ctx, store.AuditFilter{Subject: store.ShellModeSubject("room", "t1", "code")})
		if err != nil || len(entries) != 1 || entries[0].Action != store.ActionShellModeSet || entries[0].Actor != "ada" {
			t.Fatalf("audit %+v, %v", entries, err)
		}
	})

	t.Run("MinimalIsStoredForThePlacementItsPreflightChecked", func(t *testing.T) {
		if _, err := e.admin.SetShellMode(ctx, &operatorv1.SetShellModeRequest{Conversation: conv, AgentName: "code",
			Mode: operatorv1.ShellMode_SHELL_MODE_MINIMAL, WorkerKey: "gpu"}); err != nil {
			t.Fatal(err)
		}
		if targets := pf.targets(); targets[len(targets)-1].WorkerKey != "gpu" {
			t.Fatalf("checked %+v, want worker key gpu", targets[len(targets)-1])
		}
		stored, err := e.store.ShellMode(ctx, "room", "t1", "code")
		if err != nil || stored.Mode != store.ShellModeMinimal || stored.WorkerKey != "gpu" || stored.Unplaced ||
			!stored.AppliesTo("gpu") || stored.AppliesTo("") {
			t.Fatalf("stored %+v, %v; want minimal for worker key gpu only", stored, err)
		}
		if s := get(t); s.GetWorkerKey() != "gpu" || s.GetUnplaced() {
			t.Fatalf("GetShellMode %v: want the placement, worker key gpu", s)
		}
	})

	t.Run("StandardIsSavedWithoutAPreflight", func(t *testing.T) {
		pf.problems = twoProblems
		defer func() { pf.problems = nil }()
		before := len(pf.targets())
		if _, err := e.admin.SetShellMode(ctx, &operatorv1.SetShellModeRequest{Conversation: conv, AgentName: "code", Mode: operatorv1.ShellMode_SHELL_MODE_STANDARD}); err != nil {
			t.Fatal(err)
		}
		if len(pf.targets()) != before {
			t.Fatal("setting standard ran the preflight")
		}
		if s := get(t); s.GetMode() != operatorv1.ShellMode_SHELL_MODE_STANDARD || s.GetUpdatedBy() != "ada" {
			t.Fatalf("setting %v", s)
		}
	})

	t.Run("ResetGoesBackToTheDefault", func(t *testing.T) {
		if _, err := e.admin.SetShellMode(ctx, &operatorv1.SetShellModeRequest{Conversation: conv, AgentName: "code", Mode: operatorv1.ShellMode_SHELL_MODE_MINIMAL}); err != nil {
			t.Fatal(err)
		}
		reset, err := e.admin.ResetShellMode(ctx, &operatorv1.ResetShellModeRequest{Conversation: conv, AgentName: "code"})
		if err != nil || reset.GetSetting().GetMode() != operatorv1.ShellMode_SHELL_MODE_STANDARD {
			t.Fatalf("reset %v, %v", reset, err)
		}
		if s := get(t); s.GetMode() != operatorv1.ShellMode_SHELL_MODE_STANDARD || s.GetUpdatedBy() != "" {
			t.Fatalf("setting after reset %v", s)
		}
		entries, _ := e.store.ListAudit(ctx, store.AuditFilter{Action: store.ActionShellModeReset})
		if len(entries) != 1 || entries[0].Actor != "ada" {
			t.Fatalf("reset audit %+v", entries)
		}
	})

	t.Run("MembersCannotSetOrReset", func(t *testing.T) {
		_, err := e.member.SetShellMode(ctx, &operatorv1.SetShellModeRequest{Conversation: conv, AgentName: "code", Mode: operatorv1.ShellMode_SHELL_MODE_STANDARD})
		wantCode(t, "member SetShellMode", err, codes.PermissionDenied)
		_, err = e.member.ResetShellMode(ctx, &operatorv1.ResetShellModeRequest{Conversation: conv, AgentName: "code"})
		wantCode(t, "member ResetShellMode", err, codes.PermissionDenied)
	})

	t.Run("InvalidRequestsAreRefused", func(t *testing.T) {
		for name, req := range map[string]*operatorv1.SetShellModeRequest{
			"NoMode":       {Conversation: conv, AgentName: "code"},
			"NoChannel":    {Conversation: &conversationv1.Conversation{Thread: "t1"}, AgentName: "code", Mode: operatorv1.ShellMode_SHELL_MODE_STANDARD},
			"NoAgent":      {Conversation: conv, Mode: operatorv1.ShellMode_SHELL_MODE_STANDARD},
			"BadAgentName": {Conversation: conv, AgentName: "../etc", Mode: operatorv1.ShellMode_SHELL_MODE_MINIMAL},
		} {
			_, err := e.admin.SetShellMode(ctx, req)
			wantCode(t, name, err, codes.InvalidArgument)
		}
		_, err := e.member.GetShellMode(ctx, &operatorv1.GetShellModeRequest{Conversation: conv})
		wantCode(t, "GetShellMode without an agent", err, codes.InvalidArgument)
	})
}

func TestShellModesOverREST(t *testing.T) {
	e := startAPI(t)
	pf := e.preflight
	const target = `"conversation":{"channel":"room","thread":"t1"},"agent_name":"code"`
	for _, tc := range []struct {
		name         string
		method, path string
		token        string
		body         string
		problems     []shellmode.Problem
		code         int
		want         string
	}{
		{"GetShowsTheDefault", http.MethodGet, "/v1/operator/shellModes?conversation.channel=room&conversation.thread=t1&agent_name=code", e.memberToken, "", nil, 200, `"SHELL_MODE_STANDARD"`},
		{"SetMinimalWithProblemsIsPreconditionFailed", http.MethodPost, "/v1/operator/shellModes:set", e.adminToken, `{` + target + `,"mode":"SHELL_MODE_MINIMAL"}`, twoProblems, 400, "not writable"},
		{"SetMinimal", http.MethodPost, "/v1/operator/shellModes:set", e.adminToken, `{` + target + `,"mode":"SHELL_MODE_MINIMAL"}`, nil, 200, `"SHELL_MODE_MINIMAL"`},
		{"GetShowsWhoSetIt", http.MethodGet, "/v1/operator/shellModes?conversation.channel=room&conversation.thread=t1&agent_name=code", e.memberToken, "", nil, 200, `"ada"`},
		{"MemberSetIsForbidden", http.MethodPost, "/v1/operator/shellModes:set", e.memberToken, `{` + target + `,"mode":"SHELL_MODE_STANDARD"}`, nil, 403, "only an admin"},
		{"SetWithoutModeIsBadRequest", http.MethodPost, "/v1/operator/shellModes:set", e.adminToken, `{` + target + `}`, nil, 400, "mode must be"},
		{"Reset", http.MethodPost, "/v1/operator/shellModes:reset", e.adminToken, `{` + target + `}`, nil, 200, `"SHELL_MODE_STANDARD"`},
		{"UnknownCredentialIsUnauthorized", http.MethodGet, "/v1/operator/shellModes?conversation.channel=room&agent_name=code", "nope", "", nil, 401, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pf.problems = tc.problems
			res := e.do(t, tc.method, tc.path, tc.token, tc.body)
			if res.code != tc.code || !strings.Contains(string(res.body), tc.want) {
				t.Fatalf("%s %s = %d %s; want %d containing %s", tc.method, tc.path, res.code, res.body, tc.code, tc.want)
			}
			if tc.problems != nil {
				var body struct {
					Code    int               `json:"code"`
					Details []json.RawMessage `json:"details"`
				}
				if err := json.Unmarshal(res.body, &body); err != nil || body.Code != int(codes.FailedPrecondition) || len(body.Details) != 1 ||
					!strings.Contains(string(body.Details[0]), "google.rpc.PreconditionFailure") {
					t.Fatalf("body %s (%v): want FAILED_PRECONDITION with its PreconditionFailure", res.body, err)
				}
			}
		})
	}
}
