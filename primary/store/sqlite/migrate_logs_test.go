package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

// The audit log and the outbox keep their rows and their ids across 0013, new ids follow the
// largest one, and no row of either can be deleted.
func TestMigrateKeepsTheLogsAppendOnly(t *testing.T) {
	ctx := context.Background()
	path, db := databaseAtVersion(t, 12)
	// Ids with a gap at the top: a rowid table starts again after the largest one left.
	_, err := db.ExecContext(ctx, `INSERT INTO audit_log (id, at, actor, action, subject, detail)
		VALUES (3, 1, 'ada', 'mode.set', 'conversation/room/t', '{}'), (40, 2, 'ada', 'mode.set', 'conversation/room/t', '{}')`)
	if err == nil {
		_, err = db.ExecContext(ctx, `INSERT INTO continuations (id, idempotency_key, channel, thread, text, created_at, post, checkpoint)
			VALUES (7, 'k7', 'room', 't', 'resume', 1, 1, x'00ff')`)
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SetConversationMode(ctx, "room", "t", store.ModeAuto, "bob"); err != nil {
		t.Fatal(err)
	}
	entries, err := s.ListAudit(ctx, store.AuditFilter{})
	if err != nil || len(entries) != 3 || entries[0].ID != 41 || entries[1].ID != 40 || entries[2].ID != 3 {
		t.Fatalf("audit after migration %+v, %v; want ids 41, 40, 3", entries, err)
	}
	id, created, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "k8", Channel: "room", Text: "next"})
	if err != nil || !created || id != 8 {
		t.Fatalf("next continuation %d, %v, %v; want id 8", id, created, err)
	}
	old, err := s.PendingContinuations(ctx, 0, 10)
	if err != nil || len(old) != 2 || old[0].ID != 7 || !old[0].Post || string(old[0].Checkpoint) != "\x00\xff" {
		t.Fatalf("continuations after migration %+v, %v", old, err)
	}

	for _, table := range []string{"audit_log", "continuations"} {
		_, err := s.driver.writer.conn.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = (SELECT max(id) FROM `+table+`)`)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("deleting from %s: %v, want it refused as append-only", table, err)
		}
	}
}
