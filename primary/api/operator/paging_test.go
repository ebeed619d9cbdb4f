package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// pagedList is one list method as the paging table sees it.
type pagedList struct {
	name string
	// path is the list's REST path, with no query.
	path string
	// add inserts the i-th record, matching the list's filters.
	add func(t *testing.T, e *apiEnv, i int)
	// list reads one page with the list's filters, or with other filters when other is set;
	// it returns the keys of the page's records.
	list func(ctx context.Context, e *apiEnv, other bool, size uint32, token string) (keys []string, next string, err error)
	// noFilters: the list takes no filter, so no token can be of other filters.
	noFilters bool
}

var (
	room  = &conversationv1.Conversation{Channel: "room", Thread: "t1"}
	room2 = &conversationv1.Conversation{Channel: "room", Thread: "t2"}
)

// conv is room, or room2 for other filters.
func conv(other bool) *conversationv1.Conversation {
	if other {
		return room2
	}
	return room
}

func ids[R interface{ GetId() uint64 }](rs []R) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, fmt.Sprint(r.GetId()))
	}
	return out
}

func pagedLists() []pagedList {
	return []pagedList{
		{
			name: "AuditLog", path: "/v1/operator/audit",
			add: func(t *testing.T, e *apiEnv, i int) {
				if _, err := e.store.AppendAudit(context.Background(), store.NewAuditEntry{Actor: "pager", Action: "x.y"}); err != nil {
					t.Fatal(err)
				}
			},
			list: func(ctx context.Context, e *apiEnv, other bool, size uint32, token string) ([]string, string, error) {
				actor := map[bool]string{false: "pager", true: "someone"}[other]
				r, err := e.admin.ListAuditLog(ctx, &operatorv1.ListAuditLogRequest{Actor: actor, PageSize: size, PageToken: token})
				return ids(r.GetEntries()), r.GetNextPageToken(), err
			},
		},
		{
			name: "Jobs", path: "/v1/operator/jobs",
			add: func(t *testing.T, e *apiEnv, i int) { createJob(t, e, "t1") },
			list: func(ctx context.Context, e *apiEnv, other bool, size uint32, token string) ([]string, string, error) {
				r, err := e.member.ListJobs(ctx, &operatorv1.ListJobsRequest{Conversation: conv(other), PageSize: size, PageToken: token})
				return ids(r.GetJobs()), r.GetNextPageToken(), err
			},
		},
		{
			name: "Approvals", path: "/v1/operator/approvals",
			add: func(t *testing.T, e *apiEnv, i int) { saveApproval(t, e, "t1", fmt.Sprintf("make deploy-%d", i)) },
			list: func(ctx context.Context, e *apiEnv, other bool, size uint32, token string) ([]string, string, error) {
				r, err := e.member.ListApprovals(ctx, &operatorv1.ListApprovalsRequest{Conversation: conv(other), PageSize: size, PageToken: token})
				return ids(r.GetApprovals()), r.GetNextPageToken(), err
			},
		},
		{
			name: "Prompts", path: "/v1/operator/prompts",
			add: func(t *testing.T, e *apiEnv, i int) { createPrompt(t, e, store.PromptApproval, "t1") },
			list: func(ctx context.Context, e *apiEnv, other bool, size uint32, token string) ([]string, string, error) {
				r, err := e.member.ListPrompts(ctx, &operatorv1.ListPromptsRequest{Conversation: conv(other), PageSize: size, PageToken: token})
				return ids(r.GetPrompts()), r.GetNextPageToken(), err
			},
		},
		{
			name: "Questions", path: "/v1/operator/questions",
			add: func(t *testing.T, e *apiEnv, i int) { askQuestions(t, e, "t1", fmt.Sprintf("@r%d", i)) },
			list: func(ctx context.Context, e *apiEnv, other bool, size uint32, token string) ([]string, string, error) {
				r, err := e.member.ListQuestions(ctx, &operatorv1.ListQuestionsRequest{Conversation: conv(other), PageSize: size, PageToken: token})
				return ids(r.GetQuestions()), r.GetNextPageToken(), err
			},
		},
		{
			name: "Progress", path: "/v1/operator/progress",
			// Two snapshots at each time: the response id orders those.
			add: func(t *testing.T, e *apiEnv, i int) {
				saveProgress(t, e, fmt.Sprintf("resp-%02d", i), "t1", time.Unix(1767225600+int64(i/2), 0))
			},
			list: func(ctx context.Context, e *apiEnv, other bool, size uint32, token string) ([]string, string, error) {
				r, err := e.member.ListProgress(ctx, &operatorv1.ListProgressRequest{Conversation: conv(other), PageSize: size, PageToken: token})
				var keys []string
				for _, p := range r.GetSnapshots() {
					keys = append(keys, p.GetResponseId())
				}
				return keys, r.GetNextPageToken(), err
			},
		},
		{
			name: "CallApprovals", path: "/v1/operator/call-approvals",
			add: func(t *testing.T, e *apiEnv, i int) {
				if _, err := e.store.SaveCallApproval(context.Background(), store.NewCallApproval{
					CallID: uuid.NewString(), Toolkit: "test", Function: "confirm_echo", Arguments: `{}`, BashCallID: "bash-1",
					ResponseID: "gone", Agent: "code", Requester: "sam", Channel: "room", Thread: "t1",
				}); err != nil {
					t.Fatal(err)
				}
			},
			list: func(ctx context.Context, e *apiEnv, other bool, size uint32, token string) ([]string, string, error) {
				r, err := e.member.ListCallApprovals(ctx, &operatorv1.ListCallApprovalsRequest{Conversation: conv(other), PageSize: size, PageToken: token})
				return ids(r.GetCallApprovals()), r.GetNextPageToken(), err
			},
		},
		{
			name: "PermissionAllowances", path: "/v1/operator/permissionAllowances",
			add: func(t *testing.T, e *apiEnv, i int) {
				ctx := context.Background()
				p, err := e.store.CreatePrompt(ctx, store.NewPrompt{Kind: store.PromptPermission, Channel: "room", Thread: "t1",
					Requester: "sam", Agent: "code", ResponseID: "resp-1", CallID: "call-1", ToolName: fmt.Sprintf("Tool%02d", i),
					ToolUseID: "toolu_1", MaskedInput: json.RawMessage(`{}`), Deadline: time.Now().Add(time.Minute)})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.store.DecidePrompt(ctx, p.ID, "ada", store.DecisionAllowConversation, ""); err != nil {
					t.Fatal(err)
				}
			},
			list: func(ctx context.Context, e *apiEnv, other bool, size uint32, token string) ([]string, string, error) {
				r, err := e.member.ListPermissionAllowances(ctx, &operatorv1.ListPermissionAllowancesRequest{Conversation: conv(other), PageSize: size, PageToken: token})
				var keys []string
				for _, a := range r.GetAllowances() {
					keys = append(keys, a.GetToolName())
				}
				return keys, r.GetNextPageToken(), err
			},
		},
		{
			name: "Responses", path: "/v1/operator/responses", noFilters: true,
			add: func(t *testing.T, e *apiEnv, i int) {
				r, err := e.responses.Open(response.Spec{Agent: "code"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(r.Close)
			},
			list: func(ctx context.Context, e *apiEnv, _ bool, size uint32, token string) ([]string, string, error) {
				r, err := e.member.ListResponses(ctx, &operatorv1.ListResponsesRequest{PageSize: size, PageToken: token})
				var keys []string
				for _, x := range r.GetResponses() {
					keys = append(keys, x.GetId())
				}
				return keys, r.GetNextPageToken(), err
			},
		},
	}
}

// TestEveryListPagesTheSameWay: every list method of OperatorService pages by the same rules:
// its pages cover the list once even when records are added between them, page_size is
// 1..1000, and a page token is good only for the list and filters that returned it.
func TestEveryListPagesTheSameWay(t *testing.T) {
	ctx := context.Background()
	lists := pagedLists()
	for i, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			e := startAPI(t)
			for i := range 5 {
				l.add(t, e, i)
			}
			whole, next, err := l.list(ctx, e, false, 0, "")
			if err != nil || len(whole) != 5 || next != "" {
				t.Fatalf("the whole list: %v, next %q, %v; want 5 records and no next page", whole, next, err)
			}

			t.Run("PagesCoverTheListOnceThoughRecordsAreAddedBetweenThem", func(t *testing.T) {
				first, token, err := l.list(ctx, e, false, 2, "")
				if err != nil || token == "" || len(first) != 2 {
					t.Fatalf("first page %v, next %q, %v", first, token, err)
				}
				got := first
				for n := 5; token != ""; n++ {
					l.add(t, e, n) // never on a later page: the list goes on from where the page ended
					var page []string
					if page, token, err = l.list(ctx, e, false, 2, token); err != nil {
						t.Fatal(err)
					}
					got = append(got, page...)
				}
				if l.name == "Responses" { // in id order: a new response may sort after the page
					got = slices.DeleteFunc(got, func(k string) bool { return !slices.Contains(whole, k) })
				}
				if !slices.Equal(got, whole) {
					t.Fatalf("pages listed %v, want %v", got, whole)
				}
			})

			t.Run("PageSize1000PassesAndMoreIsInvalid", func(t *testing.T) {
				if _, _, err := l.list(ctx, e, false, 1000, ""); err != nil {
					t.Errorf("page_size 1000: %v", err)
				}
				_, _, err := l.list(ctx, e, false, 1001, "")
				wantCode(t, "page_size 1001", err, codes.InvalidArgument)
			})

			t.Run("ATokenOfAnotherListIsInvalid", func(t *testing.T) {
				o := lists[(i+1)%len(lists)]
				for k := range 3 {
					o.add(t, e, 100+k)
				}
				_, token, err := o.list(ctx, e, false, 1, "")
				if err != nil || token == "" {
					t.Fatalf("%s: token %q, %v", o.name, token, err)
				}
				_, _, err = l.list(ctx, e, false, 1, token)
				wantCode(t, o.name+"'s token", err, codes.InvalidArgument)
			})

			t.Run("ATokenOfOtherFiltersIsInvalid", func(t *testing.T) {
				if l.noFilters {
					t.Skip("the list takes no filter")
				}
				_, token, _ := l.list(ctx, e, false, 1, "")
				_, _, err := l.list(ctx, e, true, 1, token)
				wantCode(t, "another filter's token", err, codes.InvalidArgument)
			})

			t.Run("AMalformedTokenIsInvalidOverGRPCAndREST", func(t *testing.T) {
				for _, token := range []string{"42", "not-a-token", "%%%"} {
					_, _, err := l.list(ctx, e, false, 0, token)
					wantCode(t, "token "+token, err, codes.InvalidArgument)
					if s, _ := status.FromError(err); s.Message() == "" {
						t.Errorf("token %s: no message", token)
					}
				}
				if r := e.do(t, http.MethodGet, l.path+"?page_token=not-a-token", e.adminToken, ""); r.code != http.StatusBadRequest {
					t.Errorf("REST: %d %s, want 400", r.code, r.body)
				}
			})
		})
	}
}
