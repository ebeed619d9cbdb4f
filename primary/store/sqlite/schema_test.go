package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	sqlitedriver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/turncli/turncli/primary/store"
)

// The schema holds the uniqueness rules against any writer of the file, not only this driver.
func TestSchemaUniqueness(t *testing.T) {
	ctx := context.Background()

	t.Run("TheDatabaseRefusesASecondPendingApprovalForAKey", func(t *testing.T) {
		dir := t.TempDir()
		s := open(t, dir, nil)
		ap, _, err := s.SaveApproval(ctx, store.NewApproval{Kind: "command", Channel: "room", Thread: "t1", Command: "make test", Workdir: "/work"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = raw(t, dir).Exec(`INSERT INTO approvals (key, kind, channel, thread, author, command, workdir, ceiling_ns,
			label, agent, worker_key, status, created_at) SELECT key, kind, channel, thread, author, command, workdir,
			ceiling_ns, label, agent, worker_key, 'pending', created_at FROM approvals WHERE id = ?`, ap.ID)
		var se *sqlitedriver.Error
		if !errors.As(err, &se) || se.Code() != sqlite3.SQLITE_CONSTRAINT_UNIQUE {
			t.Fatalf("second pending row: %v, want a UNIQUE violation", err)
		}
	})

	t.Run("TheDatabaseRefusesASecondPendingRequestForAPersonInAThread", func(t *testing.T) {
		dir := t.TempDir()
		s := open(t, dir, nil)
		q, _, err := s.SaveQuestionRequest(ctx, store.NewQuestionRequest{Channel: "room", Thread: "t1", Requester: "@alice",
			Title: "Deploy", Presentation: "auto", Questions: json.RawMessage(`[{"id":"q1"}]`)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = raw(t, dir).Exec(`INSERT INTO question_requests (key, channel, thread, requester, agent, response_id,
			title, presentation, questions, status, revision, draft, created_at, updated_at)
			SELECT substr(key, 2) || 'x', channel, thread, requester, agent, response_id, 'Other', presentation, questions,
			'pending', 1, '{}', created_at, updated_at FROM question_requests WHERE id = ?`, q.ID)
		var se *sqlitedriver.Error
		if !errors.As(err, &se) || se.Code() != sqlite3.SQLITE_CONSTRAINT_UNIQUE {
			t.Fatalf("second pending row: %v, want a UNIQUE violation", err)
		}
	})
}
