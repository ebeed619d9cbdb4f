package sqlstore_test

import (
	"testing"

	"github.com/turncli/turncli/primary/store/sqlstore"
)

func TestNumberedPlaceholders(t *testing.T) {
	for _, tc := range []struct{ name, query, want string }{
		{"EachMarkIsNumberedInOrder", `SELECT a FROM t WHERE b = ? AND c IN (?, ?) LIMIT ?`,
			`SELECT a FROM t WHERE b = $1 AND c IN ($2, $3) LIMIT $4`},
		{"AQueryWithoutMarksIsUnchanged", `SELECT 1`, `SELECT 1`},
		{"MarksInsideQuotesAreText", `SELECT '?', "a?b" FROM t WHERE x = ?`, `SELECT '?', "a?b" FROM t WHERE x = $1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p sqlstore.NumberedPlaceholders
			for range 2 { // the second from memory
				if got := p.Bind(tc.query); got != tc.want {
					t.Fatalf("Bind(%q) = %q, want %q", tc.query, got, tc.want)
				}
			}
		})
	}
}
