package sqlwhere

import (
	"slices"
	"testing"
	"time"
)

func TestEachDialectWritesTheSameClauseWithItsPlaceholders(t *testing.T) {
	at := time.Unix(0, 42)
	build := func(c interface {
		Equal(string, string)
		Conversation(string, string)
		BeforeID(int64)
		AfterTime(string, time.Time, []string, []any)
	}) {
		c.Equal("status", "pending")
		c.Equal("kind", "") // unset: left out
		c.Conversation("!room", "")
		c.BeforeID(7)
		c.AfterTime("at", at, []string{"a", "b"}, []any{"x", "y"})
	}
	var pg Conditions[PostgreSQL]
	build(&pg)
	if want := "status = $1 AND channel = $2 AND thread = $3 AND id < $4 AND (at < $5 OR (at = $6 AND (a, b) > ($7, $8)))"; pg.SQL() != want {
		t.Errorf("PostgreSQL:\n got %s\nwant %s", pg.SQL(), want)
	}
	if pg.Next() != "$9" {
		t.Errorf("PostgreSQL next %s", pg.Next())
	}
	var lite Conditions[SQLite]
	build(&lite)
	if want := "status = ? AND channel = ? AND thread = ? AND id < ? AND (at < ? OR (at = ? AND (a, b) > (?, ?)))"; lite.SQL() != want {
		t.Errorf("SQLite:\n got %s\nwant %s", lite.SQL(), want)
	}
	wantArgs := []any{"pending", "!room", "", int64(7), int64(42), int64(42), "x", "y"}
	if !slices.Equal(pg.Args, wantArgs) || !slices.Equal(lite.Args, wantArgs) {
		t.Errorf("args %v / %v, want %v", pg.Args, lite.Args, wantArgs)
	}
	var none Conditions[SQLite]
	var nonePG Conditions[PostgreSQL]
	if none.SQL() != "1" || nonePG.SQL() != "true" {
		t.Errorf("no filter: %q, %q", none.SQL(), nonePG.SQL())
	}
}
