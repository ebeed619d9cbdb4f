package sqlite

import "github.com/turncli/turncli/primary/store/sqlstore"

// dialect is SQLite's spelling of the shared SQL (package sqlstore).
type dialect struct{}

// Bind keeps the placeholders: SQLite reads "?".
func (dialect) Bind(query string) string { return query }

// Limit is -1 for no limit: SQLite's LIMIT takes no NULL.
func (dialect) Limit(limit int) any {
	if limit <= 0 {
		return -1
	}
	return limit
}

// ContinuationOrder is nothing: every write transaction runs alone on the single writer, so
// continuations commit in id order already.
func (dialect) ContinuationOrder() sqlstore.Statement { return sqlstore.Statement{} }

// ModifyingWith is false: SQLite's WITH takes no UPDATE. In this process, the read that
// follows a change costs no round trip.
func (dialect) ModifyingWith() bool { return false }
