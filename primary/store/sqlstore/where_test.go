package sqlstore

import (
	"slices"
	"testing"
	"time"
)

func TestConditions(t *testing.T) {
	t.Run("EachSetFilterIsAddedInOrderWithItsArguments", func(t *testing.T) {
		var c conditions
		c.Equal("status", "pending")
		c.Equal("kind", "") // unset: left out
		c.Conversation("!room", "")
		c.BeforeID(7)
		c.AfterTime("at", time.Unix(0, 42), []string{"a", "b"}, []any{"x", "y"})
		if want := "status = ? AND channel = ? AND thread = ? AND id < ? AND (at < ? OR (at = ? AND (a, b) > (?, ?)))"; c.SQL() != want {
			t.Errorf("clause:\n got %s\nwant %s", c.SQL(), want)
		}
		if wantArgs := []any{"pending", "!room", "", int64(7), int64(42), int64(42), "x", "y"}; !slices.Equal(c.Args, wantArgs) {
			t.Errorf("args %v, want %v", c.Args, wantArgs)
		}
		var pg NumberedPlaceholders
		if want := "SELECT x FROM t WHERE status = $1 AND channel = $2 AND thread = $3 AND id < $4 AND " +
			"(at < $5 OR (at = $6 AND (a, b) > ($7, $8))) LIMIT $9"; pg.Bind("SELECT x FROM t WHERE "+c.SQL()+" LIMIT ?") != want {
			t.Errorf("bound for PostgreSQL:\n got %s\nwant %s", pg.Bind("SELECT x FROM t WHERE "+c.SQL()+" LIMIT ?"), want)
		}
	})

	t.Run("NoFilterIsTrue", func(t *testing.T) {
		var none conditions
		if none.SQL() != "TRUE" || len(none.Args) != 0 {
			t.Errorf("no filter: %q, %v", none.SQL(), none.Args)
		}
		none.AfterTime("at", time.Time{}, []string{"a"}, []any{"x"}) // the first page
		none.BeforeID(0)
		if none.SQL() != "TRUE" {
			t.Errorf("a first page adds %q", none.SQL())
		}
	})
}
