package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/store"
)

// createPrompt saves a pending prompt of kind in room/<thread>.
func createPrompt(t *testing.T, e *apiEnv, kind store.PromptKind, thread string) store.Prompt {
	t.Helper()
	p := store.NewPrompt{
		Kind: kind, Channel: "room", Thread: thread, Requester: "sam", Agent: "code", ResponseID: "resp-1", CallID: "call-1",
		Deadline: time.Now().Add(time.Minute),
	}
	if kind == store.PromptApproval {
		p.Title, p.Details, p.ApproveLabel, p.DenyLabel = "Deploy?", "Deploy v2 to production", "Ship it", "Hold"
	} else {
		p.ToolName, p.ToolUseID, p.MaskedInput = "Bash", "toolu_1", json.RawMessage(`{"command":"ls","token":"***"}`)
	}
	got, err := e.store.CreatePrompt(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func decidePrompt(id int64, a operatorv1.Decision, text string) *operatorv1.DecidePromptRequest {
	return &operatorv1.DecidePromptRequest{PromptId: uint64(id), Decision: a, Text: text}
}

const (
	promptApprove   = operatorv1.Decision_DECISION_APPROVE
	promptDeny      = operatorv1.Decision_DECISION_DENY
	promptComment   = operatorv1.Decision_DECISION_COMMENT
	allowOnce       = operatorv1.Decision_DECISION_ALLOW_ONCE
	allowThread     = operatorv1.Decision_DECISION_ALLOW_THREAD
	allowEverywhere = operatorv1.Decision_DECISION_ALLOW_CONVERSATION
)

func TestPromptsAPI(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)

	t.Run("MemberReadsAnApprovalRequestAsAsked", func(t *testing.T) {
		p := createPrompt(t, e, store.PromptApproval, "t1")
		got, err := e.member.GetPrompt(ctx, &operatorv1.GetPromptRequest{PromptId: uint64(p.ID)})
		if err != nil {
			t.Fatal(err)
		}
		g := got.GetPrompt()
		if g.GetId() != uint64(p.ID) || g.GetKind() != operatorv1.PromptKind_PROMPT_KIND_APPROVAL ||
			g.GetStatus() != operatorv1.PromptStatus_PROMPT_STATUS_PENDING || g.GetConversation().GetThread() != "t1" ||
			g.GetRequester() != "sam" || g.GetAgent() != "code" || g.GetResponseId() != "resp-1" || g.GetCallId() != "call-1" ||
			g.GetTitle() != "Deploy?" || g.GetDetails() != "Deploy v2 to production" || g.GetApproveLabel() != "Ship it" ||
			g.GetDenyLabel() != "Hold" || g.GetMaskedInputJson() != "" || g.GetCreatedAt() == nil || g.GetDeadline() == nil ||
			g.GetDecidedAt() != nil || g.GetDecision() != operatorv1.Decision_DECISION_UNSPECIFIED {
			t.Fatalf("GetPrompt = %v", g)
		}
	})

	t.Run("PermissionPromptShowsOnlyTheMaskedInput", func(t *testing.T) {
		p := createPrompt(t, e, store.PromptPermission, "t1")
		got, err := e.member.GetPrompt(ctx, &operatorv1.GetPromptRequest{PromptId: uint64(p.ID)})
		if err != nil {
			t.Fatal(err)
		}
		var input map[string]string
		if err := json.Unmarshal([]byte(got.GetPrompt().GetMaskedInputJson()), &input); err != nil || input["token"] != "***" ||
			got.GetPrompt().GetToolName() != "Bash" || got.GetPrompt().GetToolUseId() != "toolu_1" ||
			got.GetPrompt().GetKind() != operatorv1.PromptKind_PROMPT_KIND_PERMISSION {
			t.Fatalf("GetPrompt = %v (%v)", got.GetPrompt(), err)
		}
	})

	t.Run("MemberApprovesOnceAndAReplayIsAborted", func(t *testing.T) {
		p := createPrompt(t, e, store.PromptApproval, "t1")
		got, err := e.member.DecidePrompt(ctx, decidePrompt(p.ID, promptApprove, ""))
		if err != nil {
			t.Fatal(err)
		}
		g := got.GetPrompt()
		if g.GetStatus() != operatorv1.PromptStatus_PROMPT_STATUS_APPROVED || g.GetDecision() != promptApprove ||
			g.GetDecidedBy() != "mia" || g.GetDecidedAt() == nil {
			t.Fatalf("after approve = %v", g)
		}
		for _, a := range []operatorv1.Decision{promptApprove, promptDeny} {
			_, err := e.admin.DecidePrompt(ctx, decidePrompt(p.ID, a, ""))
			wantCode(t, "replayed "+a.String(), err, codes.Aborted)
			if msg, want := status.Convert(err).Message(), fmt.Sprintf("prompt %d can no longer be decided: it is approved", p.ID); msg != want {
				t.Fatalf("replay message %q, want %q", msg, want)
			}
		}
	})

	t.Run("CommentIsNotApprovedAndCarriesTheFeedback", func(t *testing.T) {
		p := createPrompt(t, e, store.PromptApproval, "t1")
		got, err := e.member.DecidePrompt(ctx, decidePrompt(p.ID, promptComment, "  use the canary first \n"))
		if err != nil {
			t.Fatal(err)
		}
		if g := got.GetPrompt(); g.GetStatus() != operatorv1.PromptStatus_PROMPT_STATUS_DENIED || g.GetDecision() != promptComment ||
			g.GetFeedback() != "use the canary first" {
			t.Fatalf("after comment = %v", g)
		}
	})

	t.Run("OnlyAnAdminAllowsAToolForTheWholeConversation", func(t *testing.T) {
		p := createPrompt(t, e, store.PromptPermission, "t2")
		_, err := e.member.DecidePrompt(ctx, decidePrompt(p.ID, allowEverywhere, ""))
		wantCode(t, "member allows everywhere", err, codes.PermissionDenied)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "only an admin can allow a tool for a whole conversation") {
			t.Fatalf("message %q does not name the rule", msg)
		}
		if still, err := e.store.Prompt(ctx, p.ID); err != nil || still.Status != store.PromptPending {
			t.Fatalf("after a member's refusal: %v, %v; want pending", still.Status, err)
		}
		got, err := e.admin.DecidePrompt(ctx, decidePrompt(p.ID, allowEverywhere, ""))
		if err != nil || got.GetPrompt().GetStatus() != operatorv1.PromptStatus_PROMPT_STATUS_APPROVED ||
			got.GetPrompt().GetDecision() != allowEverywhere || got.GetPrompt().GetDecidedBy() != "ada" {
			t.Fatalf("admin allows everywhere = %v, %v", got, err)
		}
	})

	t.Run("DecisionTheKindDoesNotTakeIsInvalid", func(t *testing.T) {
		approval := createPrompt(t, e, store.PromptApproval, "t3")
		permission := createPrompt(t, e, store.PromptPermission, "t3")
		for _, c := range []struct {
			name string
			req  *operatorv1.DecidePromptRequest
		}{
			{"allow an approval", decidePrompt(approval.ID, allowOnce, "")},
			{"approve a permission", decidePrompt(permission.ID, promptApprove, "")},
			{"no decision", decidePrompt(permission.ID, operatorv1.Decision_DECISION_UNSPECIFIED, "")},
			{"unknown decision", decidePrompt(permission.ID, operatorv1.Decision(99), "")},
		} {
			_, err := e.admin.DecidePrompt(ctx, c.req)
			wantCode(t, c.name, err, codes.InvalidArgument)
		}
		for _, c := range []struct {
			name     string
			req      *operatorv1.DecidePromptRequest
			accepted string
		}{
			{"an approval request names its decisions", decidePrompt(approval.ID, allowThread, ""),
				"an approval request takes DECISION_APPROVE, DECISION_DENY or DECISION_COMMENT, not DECISION_ALLOW_THREAD"},
			{"a permission prompt names its decisions", decidePrompt(permission.ID, promptComment, "why"),
				"a permission prompt takes DECISION_ALLOW_ONCE, DECISION_ALLOW_THREAD, DECISION_ALLOW_CONVERSATION or DECISION_DENY, not DECISION_COMMENT"},
			{"no decision names both kinds' decisions", decidePrompt(permission.ID, operatorv1.Decision_DECISION_UNSPECIFIED, ""),
				"an approval request takes DECISION_APPROVE, DECISION_DENY or DECISION_COMMENT; " +
					"a permission prompt takes DECISION_ALLOW_ONCE, DECISION_ALLOW_THREAD, DECISION_ALLOW_CONVERSATION or DECISION_DENY; not DECISION_UNSPECIFIED"},
		} {
			_, err := e.admin.DecidePrompt(ctx, c.req)
			wantRefusedNaming(t, c.name, err, c.accepted)
		}
		got, err := e.member.DecidePrompt(ctx, decidePrompt(permission.ID, allowThread, ""))
		if err != nil || got.GetPrompt().GetDecision() != allowThread {
			t.Fatalf("allow for the thread = %v, %v", got, err)
		}
	})

	t.Run("ExpiredPromptIsNeverActionable", func(t *testing.T) {
		p := createPrompt(t, e, store.PromptPermission, "t4")
		if _, err := e.store.ExpirePrompt(ctx, p.ID, "Nobody answered in time."); err != nil {
			t.Fatal(err)
		}
		_, err := e.member.DecidePrompt(ctx, decidePrompt(p.ID, allowOnce, ""))
		wantCode(t, "allow an expired prompt", err, codes.Aborted)
		if msg := status.Convert(err).Message(); !strings.HasSuffix(msg, "it is expired") {
			t.Fatalf("message %q", msg)
		}
		got, err := e.member.GetPrompt(ctx, &operatorv1.GetPromptRequest{PromptId: uint64(p.ID)})
		if err != nil || got.GetPrompt().GetStatus() != operatorv1.PromptStatus_PROMPT_STATUS_EXPIRED ||
			got.GetPrompt().GetFeedback() != "Nobody answered in time." || got.GetPrompt().GetDecidedBy() != "" {
			t.Fatalf("expired prompt = %v, %v", got, err)
		}
	})

	t.Run("UnknownPromptIsNotFound", func(t *testing.T) {
		for _, id := range []uint64{0, 999, 1 << 63} {
			_, err := e.member.GetPrompt(ctx, &operatorv1.GetPromptRequest{PromptId: id})
			wantCode(t, fmt.Sprintf("GetPrompt %d", id), err, codes.NotFound)
			_, err = e.member.DecidePrompt(ctx, &operatorv1.DecidePromptRequest{PromptId: id, Decision: promptDeny})
			wantCode(t, fmt.Sprintf("deny %d", id), err, codes.NotFound)
		}
	})

	t.Run("ListPromptsFiltersNewestFirst", func(t *testing.T) {
		all, err := e.member.ListPrompts(ctx, &operatorv1.ListPromptsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		for _, p := range all.GetPrompts() {
			ids = append(ids, p.GetId())
		}
		if len(ids) < 4 || !slices.IsSortedFunc(ids, func(a, b uint64) int { return int(b) - int(a) }) {
			t.Fatalf("ListPrompts ids %v, want several, newest first", ids)
		}
		for _, c := range []struct {
			name string
			req  *operatorv1.ListPromptsRequest
			ok   func(*operatorv1.Prompt) bool
		}{
			{"expired", &operatorv1.ListPromptsRequest{Status: operatorv1.PromptStatus_PROMPT_STATUS_EXPIRED},
				func(p *operatorv1.Prompt) bool { return p.GetStatus() == operatorv1.PromptStatus_PROMPT_STATUS_EXPIRED }},
			{"permissions of room/t3", &operatorv1.ListPromptsRequest{Kind: operatorv1.PromptKind_PROMPT_KIND_PERMISSION,
				Conversation: &conversationv1.Conversation{Channel: "room", Thread: "t3"}},
				func(p *operatorv1.Prompt) bool {
					return p.GetKind() == operatorv1.PromptKind_PROMPT_KIND_PERMISSION && p.GetConversation().GetThread() == "t3"
				}},
		} {
			got, err := e.member.ListPrompts(ctx, c.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.GetPrompts()) != 1 || !c.ok(got.GetPrompts()[0]) {
				t.Fatalf("%s: %v, want exactly one match", c.name, got)
			}
		}
		one, err := e.member.ListPrompts(ctx, &operatorv1.ListPromptsRequest{PageSize: 1})
		if err != nil || len(one.GetPrompts()) != 1 || one.GetPrompts()[0].GetId() != ids[0] {
			t.Fatalf("page_size 1 = %v, %v; want the newest", one, err)
		}
		for _, c := range []struct {
			name string
			req  *operatorv1.ListPromptsRequest
		}{
			{"page_size 1001", &operatorv1.ListPromptsRequest{PageSize: 1001}},
			{"thread without channel", &operatorv1.ListPromptsRequest{Conversation: &conversationv1.Conversation{Thread: "t1"}}},
			{"unknown status", &operatorv1.ListPromptsRequest{Status: operatorv1.PromptStatus(42)}},
			{"unknown kind", &operatorv1.ListPromptsRequest{Kind: operatorv1.PromptKind(42)}},
		} {
			_, err := e.member.ListPrompts(ctx, c.req)
			wantCode(t, c.name, err, codes.InvalidArgument)
		}
	})
}

func TestPromptsREST(t *testing.T) {
	e := startAPI(t)
	path := func(id int64) string { return fmt.Sprintf("/v1/operator/prompts/%d:decide", id) }

	t.Run("MemberAllowingEverywhereIsForbidden", func(t *testing.T) {
		p := createPrompt(t, e, store.PromptPermission, "t1")
		r := e.do(t, http.MethodPost, path(p.ID), e.memberToken, `{"decision":"DECISION_ALLOW_CONVERSATION"}`)
		if r.code != http.StatusForbidden || jsonCode(t, r) != codes.PermissionDenied {
			t.Fatalf("member allows everywhere = %d %s, want 403", r.code, r.body)
		}
	})

	t.Run("ReplayIsAConflict", func(t *testing.T) {
		p := createPrompt(t, e, store.PromptApproval, "t1")
		r := e.do(t, http.MethodPost, path(p.ID), e.memberToken, `{"decision":"DECISION_DENY","text":"not now"}`)
		var ok struct {
			Prompt struct {
				Status   string `json:"status"`
				Decision string `json:"decision"`
				Feedback string `json:"feedback"`
			} `json:"prompt"`
		}
		if err := json.Unmarshal(r.body, &ok); err != nil || r.code != http.StatusOK || ok.Prompt.Status != "PROMPT_STATUS_DENIED" ||
			ok.Prompt.Decision != "DECISION_DENY" || ok.Prompt.Feedback != "not now" {
			t.Fatalf("deny = %d %s (%v)", r.code, r.body, err)
		}
		r = e.do(t, http.MethodPost, path(p.ID), e.adminToken, `{"decision":"DECISION_APPROVE"}`)
		if r.code != http.StatusConflict || jsonCode(t, r) != codes.Aborted {
			t.Fatalf("replayed decision = %d %s, want 409", r.code, r.body)
		}
	})

	t.Run("InvalidActionIsABadRequestAndUnknownIsNotFound", func(t *testing.T) {
		p := createPrompt(t, e, store.PromptApproval, "t1")
		if r := e.do(t, http.MethodPost, path(p.ID), e.memberToken, `{"decision":"DECISION_ALLOW_ONCE"}`); r.code != http.StatusBadRequest {
			t.Fatalf("allow an approval = %d %s, want 400", r.code, r.body)
		}
		if r := e.do(t, http.MethodGet, "/v1/operator/prompts/999", e.memberToken, ""); r.code != http.StatusNotFound {
			t.Fatalf("GET unknown = %d %s, want 404", r.code, r.body)
		}
	})

	t.Run("ListByQuery", func(t *testing.T) {
		createPrompt(t, e, store.PromptPermission, "t9")
		r := e.do(t, http.MethodGet, "/v1/operator/prompts?status=PROMPT_STATUS_PENDING&kind=PROMPT_KIND_PERMISSION&conversation.channel=room&conversation.thread=t9", e.memberToken, "")
		var list struct {
			Prompts []struct {
				Kind            string `json:"kind"`
				MaskedInputJSON string `json:"masked_input_json"`
			} `json:"prompts"`
		}
		if err := json.Unmarshal(r.body, &list); err != nil || r.code != http.StatusOK || len(list.Prompts) != 1 ||
			list.Prompts[0].Kind != "PROMPT_KIND_PERMISSION" || !strings.Contains(list.Prompts[0].MaskedInputJSON, `"***"`) {
			t.Fatalf("GET prompts = %d %s (%v)", r.code, r.body, err)
		}
	})
}

// jsonCode is the gRPC code in a gateway error body.
func jsonCode(t *testing.T, r restResponse) codes.Code {
	t.Helper()
	var body struct {
		Code codes.Code `json:"code"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("error body %q is not JSON: %v", r.body, err)
	}
	return body.Code
}
