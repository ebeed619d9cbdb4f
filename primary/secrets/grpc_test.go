package secrets_test

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/secrets"
)

func TestRedactMessageReachesEveryString(t *testing.T) {
	live := secrets.New()
	tok := token()
	live.Add(tok)
	m := &operatorv1.ListJobsResponse{Jobs: []*operatorv1.Job{{Label: "l " + tok, Tail: tok + "\n", Command: "echo ok"}}}
	live.RedactMessage(m)
	if j := m.GetJobs()[0]; j.GetLabel() != "l (redacted)" || j.GetTail() != "(redacted)\n" || j.GetCommand() != "echo ok" {
		t.Errorf("redacted job = %v", j)
	}
	s, err := structpb.NewStruct(map[string]any{"env": map[string]any{"X": tok}, "list": []any{tok}})
	if err != nil {
		t.Fatal(err)
	}
	live.RedactMessage(s)
	if got := s.AsMap(); got["env"].(map[string]any)["X"] != "(redacted)" || got["list"].([]any)[0] != "(redacted)" {
		t.Errorf("redacted struct = %v", got)
	}
}
