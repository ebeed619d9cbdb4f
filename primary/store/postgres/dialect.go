package postgres

import "github.com/turncli/turncli/primary/store/sqlstore"

// continuationOrder is the key of the advisory lock an enqueuing transaction holds from its
// insert to its commit ("outbox" in ASCII), so that continuations commit in id order across
// primaries (see sqlstore.Tx.InsertContinuation).
const continuationOrder int64 = 0x6f7574626f78

// dialect is PostgreSQL's spelling of the shared SQL (package sqlstore).
type dialect struct {
	placeholders *sqlstore.NumberedPlaceholders
}

func newDialect() dialect { return dialect{placeholders: &sqlstore.NumberedPlaceholders{}} }

// Bind numbers the placeholders $1, $2…
func (d dialect) Bind(query string) string { return d.placeholders.Bind(query) }

// Limit is NULL for no limit: PostgreSQL refuses a negative LIMIT.
func (dialect) Limit(limit int) any {
	if limit <= 0 {
		return nil
	}
	return int64(limit)
}

// ContinuationOrder takes the outbox lock until the transaction ends.
func (dialect) ContinuationOrder() sqlstore.Statement {
	return sqlstore.Statement{SQL: `SELECT pg_advisory_xact_lock($1)`, Args: []any{continuationOrder}}
}

// Expect calls store_expect (migration 0014), which raises SQLSTATE expectationFailed when
// cond is false: the transaction is aborted on the server, so the COMMIT sent with it rolls
// it back.
func (dialect) Expect(cond string, args ...any) sqlstore.Statement {
	return sqlstore.Statement{SQL: `SELECT store_expect(` + cond + `)`, Args: args}
}

// expectationFailed is the SQLSTATE store_expect raises.
const expectationFailed = "TC001"

// ChangedHere: the row's current version was made by this transaction.
func (dialect) ChangedHere() string { return `xmin = pg_current_xact_id()::xid` }
