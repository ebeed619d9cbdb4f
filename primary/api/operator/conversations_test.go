package operator_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

func TestListConversations(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	if _, err := env.Primary.Internals().Store.SetConversationMode(ctx, "!room", "$moded", store.ModeAdmin, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.Primary.Internals().Store.SaveApproval(ctx, store.NewApproval{Kind: "command", Channel: "!room", Thread: "$approvals",
		Author: "@alice", Agent: "tester", Command: "make release", Workdir: "/tmp", Ceiling: time.Minute}); err != nil {
		t.Fatal(err)
	}
	member, err := operators.Add(ctx, env.Primary.Internals().Store, "mia", store.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	type listed struct {
		Conversations []struct {
			Conversation struct{ Channel, Thread string }
			Mode         struct {
				Mode      string
				UpdatedBy string `json:"updated_by"`
			}
			LastActivityAt string `json:"last_activity_at"`
		}
	}
	for name, token := range map[string]string{"AnAdmin": adminToken(t, env), "AMember": member} {
		t.Run(name+"SeesEveryConversationWithItsModeNewestFirst", func(t *testing.T) {
			code, body := restCall(t, env, token, http.MethodGet, "/v1/operator/conversations", "")
			if code != http.StatusOK {
				t.Fatalf("%d: %s", code, body)
			}
			var got listed
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			cs := got.Conversations
			if len(cs) != 2 || cs[0].Conversation.Thread != "$approvals" || cs[0].Mode.Mode != "MODE_ASK" || cs[0].Mode.UpdatedBy != "" ||
				cs[1].Conversation.Thread != "$moded" || cs[1].Mode.Mode != "MODE_ADMIN" || cs[1].Mode.UpdatedBy != "admin" ||
				cs[0].Conversation.Channel != "!room" || cs[0].LastActivityAt == "" {
				t.Fatalf("conversations %s", body)
			}
		})
	}
	t.Run("APageOverTheBoundIsInvalid", func(t *testing.T) {
		if code, body := restCall(t, env, member, http.MethodGet, "/v1/operator/conversations?page_size=1001", ""); code != http.StatusBadRequest {
			t.Fatalf("%d: %s", code, body)
		}
	})
	t.Run("WithoutACredentialItIsRefused", func(t *testing.T) {
		if code, body := restCall(t, env, "nope", http.MethodGet, "/v1/operator/conversations", ""); code != http.StatusUnauthorized {
			t.Fatalf("%d: %s", code, body)
		}
	})
}
