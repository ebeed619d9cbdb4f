package e2e

import (
	"context"
	"strings"
	"testing"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// TestStopThreadCancelsItsPendingQuestions: the runtime says a thread stopped; its pending
// question request is cancelled and cannot be answered, another thread's is untouched.
func TestStopThreadCancelsItsPendingQuestions(t *testing.T) {
	env := testenv.Start(t)
	ask := func(thread string) {
		t.Helper()
		id := env.Open(t, func(r *responsev1.OpenResponseRequest) {
			r.Conversation.Thread = thread
			r.Flags = []string{"requester_trusted"}
		})
		run := env.RunBash(t, id, "ask", `mindroom-agent tools call interaction.ask_questions '{"title":"Deploy?","questions":[{"id":"go","prompt":"Ship it?","type":"single","options":[{"label":"Yes","value":"yes"}]}]}'`)
		if run.Result.GetExitCode() != 0 {
			t.Fatalf("ask_questions in %s: %q %q", thread, run.Stdout, run.Stderr)
		}
	}
	ask("$stopping")
	ask("$staying")
	ctx := context.Background()
	resp, err := env.Runtime.StopThread(ctx, &responsev1.StopThreadRequest{
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$stopping"},
	})
	if err != nil || resp.GetCancelledQuestions() != 1 {
		t.Fatalf("StopThread = %v, %v; want 1 cancelled", resp, err)
	}
	qs, err := env.Primary.Internals().Interaction.Questions.ListQuestions(ctx, store.QuestionFilter{Channel: "!room:example.org"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.QuestionStatus{}
	for _, q := range qs {
		got[q.Thread] = q.Status
	}
	if got["$stopping"] != store.QuestionCancelled || got["$staying"] != store.QuestionPending {
		t.Fatalf("statuses after stopping one thread: %v", got)
	}
	if _, err := env.Runtime.StopThread(ctx, &responsev1.StopThreadRequest{
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org"},
	}); err == nil || !strings.Contains(err.Error(), "thread") {
		t.Fatalf("StopThread without a thread: %v", err)
	}
}
