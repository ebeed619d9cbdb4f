package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// A shell mode stored before 0011 recorded placements keeps its mode, is unplaced, and so its
// minimal mode applies to no response until an admin sets it again.
func TestMigrateLeavesAnOldShellModeUnplaced(t *testing.T) {
	ctx := context.Background()
	path, db := databaseAtVersion(t, 10)
	set := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	_, err := db.ExecContext(ctx, `INSERT INTO shell_modes (channel, thread, agent, mode, updated_at, updated_by)
		VALUES ('room', 't', 'code', 'minimal', ?, 'ada')`, nanos(set))
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, err := s.ShellMode(ctx, "room", "t", "code")
	want := store.ShellModeSetting{Mode: store.ShellModeMinimal, Unplaced: true, UpdatedAt: set, UpdatedBy: "ada"}
	if err != nil || m != want {
		t.Fatalf("old mode after migration %+v, %v; want %+v", m, err, want)
	}
	if m.AppliesTo("") || m.AppliesTo("key-a") {
		t.Errorf("an unplaced minimal mode applies to local shells %v, key-a %v; want neither", m.AppliesTo(""), m.AppliesTo("key-a"))
	}
	if _, err := s.SetShellMode(ctx, "room", "t", "code", store.ShellModeMinimal, "", "ada"); err != nil {
		t.Fatal(err)
	}
	if m, err := s.ShellMode(ctx, "room", "t", "code"); err != nil || m.Unplaced || !m.AppliesTo("") {
		t.Fatalf("mode set again %+v, %v; want placed on the primary's own shells", m, err)
	}
}
