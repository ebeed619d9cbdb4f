package operator_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/store"
)

func saveProgress(t *testing.T, e *apiEnv, responseID, thread string, at time.Time) {
	t.Helper()
	if err := e.store.SaveProgress(context.Background(), store.ProgressSnapshot{
		ResponseID: responseID, Channel: "room", Thread: thread, Agent: "code", Requester: "sam", Title: "Ship v2",
		Steps:     json.RawMessage(`[{"id":"build","title":"Build","status":"complete","details":"","output":"","sources":[]}]`),
		UpdatedAt: at,
	}); err != nil {
		t.Fatal(err)
	}
}

func TestProgressAPI(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)
	now := time.Now().UTC()
	saveProgress(t, e, "resp-old", "t1", now.Add(-time.Minute))
	saveProgress(t, e, "resp-new", "t2", now)

	t.Run("ListsTheLatestSnapshotsMostRecentFirst", func(t *testing.T) {
		got, err := e.member.ListProgress(ctx, &operatorv1.ListProgressRequest{})
		if err != nil {
			t.Fatal(err)
		}
		s := got.GetSnapshots()
		if len(s) != 2 || s[0].GetResponseId() != "resp-new" || s[1].GetResponseId() != "resp-old" {
			t.Fatalf("ListProgress = %v", s)
		}
		var steps []map[string]any
		if err := json.Unmarshal([]byte(s[0].GetStepsJson()), &steps); err != nil || len(steps) != 1 || steps[0]["status"] != "complete" {
			t.Fatalf("steps_json %q (%v)", s[0].GetStepsJson(), err)
		}
		if s[0].GetTitle() != "Ship v2" || s[0].GetAgent() != "code" || s[0].GetRequester() != "sam" ||
			s[0].GetConversation().GetThread() != "t2" || !s[0].GetUpdatedAt().AsTime().Equal(now) {
			t.Fatalf("snapshot = %v", s[0])
		}
	})

	t.Run("FiltersByResponseAndConversation", func(t *testing.T) {
		for _, c := range []struct {
			name string
			req  *operatorv1.ListProgressRequest
			want string
		}{
			{"response", &operatorv1.ListProgressRequest{ResponseId: "resp-old"}, "resp-old"},
			{"conversation", &operatorv1.ListProgressRequest{Conversation: &conversationv1.Conversation{Channel: "room", Thread: "t2"}}, "resp-new"},
		} {
			got, err := e.member.ListProgress(ctx, c.req)
			if err != nil || len(got.GetSnapshots()) != 1 || got.GetSnapshots()[0].GetResponseId() != c.want {
				t.Fatalf("%s: %v, %v; want %s only", c.name, got, err, c.want)
			}
		}
		_, err := e.member.ListProgress(ctx, &operatorv1.ListProgressRequest{Conversation: &conversationv1.Conversation{Thread: "t2"}})
		wantCode(t, "thread without channel", err, codes.InvalidArgument)
	})

	t.Run("REST", func(t *testing.T) {
		r := e.do(t, http.MethodGet, "/v1/operator/progress?response_id=resp-new", e.memberToken, "")
		var list struct {
			Snapshots []struct {
				ResponseID string `json:"response_id"`
				StepsJSON  string `json:"steps_json"`
			} `json:"snapshots"`
		}
		if err := json.Unmarshal(r.body, &list); err != nil || r.code != http.StatusOK || len(list.Snapshots) != 1 ||
			list.Snapshots[0].ResponseID != "resp-new" || list.Snapshots[0].StepsJSON == "" {
			t.Fatalf("GET progress = %d %s (%v)", r.code, r.body, err)
		}
	})
}
