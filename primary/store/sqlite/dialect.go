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

// Expect is cond itself: each statement runs, and is read, as it is queued, so reading false
// fails the transaction before anything after it runs.
func (dialect) Expect(cond string, args ...any) sqlstore.Statement {
	return sqlstore.Statement{SQL: `SELECT ` + cond, Args: args}
}

// ChangedHere is empty: a change's own result, read before anything else runs, is its check.
func (dialect) ChangedHere() string { return "" }
