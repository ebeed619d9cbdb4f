package sqlstore

import (
	"strconv"
	"strings"
	"sync"
)

// Dialect is what the shared SQL leaves to each database. The SQL itself is written once, in
// the subset both databases read alike (ON CONFLICT, RETURNING, IS NOT DISTINCT FROM, TRUE,
// coalesce); what remains is spelled here.
type Dialect interface {
	// Bind returns query, whose placeholders are written "?", with the database's own.
	Bind(query string) string
	// Limit is the argument of a LIMIT for limit: limit itself, or "no limit" when it is zero
	// or less.
	Limit(limit int) any
	// ContinuationOrder is the statement an enqueue queues before its insert so that
	// continuation ids commit in increasing order; empty when the database's writes are
	// already serial (see Tx.InsertContinuation).
	ContinuationOrder() Statement
	// Expect is a query of one boolean, on cond (a boolean SQL expression) and its
	// arguments, that the database itself fails when cond does not hold, where statements
	// queued after it may be sent before its result is read: so what follows a broken
	// expectation is never committed. Where each statement runs, and is read, before the next
	// one is sent, it is cond itself, and reading false fails the transaction (see Tx.expect).
	Expect(cond string, args ...any) Statement
	// ChangedHere is a condition on a row, in a query of its table, that holds when this
	// transaction wrote the row as it now stands; empty where each statement is read before
	// the next one is sent, so that a change's own result is the check.
	ChangedHere() string
}

// NumberedPlaceholders binds "?" as $1, $2… (PostgreSQL's placeholders), remembering each
// query it has bound: the store's queries are a fixed set plus a bounded number of filter
// shapes. Its zero value is ready; it is safe for concurrent use.
type NumberedPlaceholders struct {
	bound sync.Map // query → bound query
}

// Bind numbers query's placeholders. The shared SQL has no "?" inside a quoted literal or
// identifier; those are skipped all the same.
func (p *NumberedPlaceholders) Bind(query string) string {
	if b, ok := p.bound.Load(query); ok {
		return b.(string)
	}
	var out strings.Builder
	n := 0
	var quote byte // the open quote, or 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			out.WriteString("$" + strconv.Itoa(n))
			continue
		}
		out.WriteByte(c)
	}
	b := out.String()
	p.bound.Store(query, b)
	return b
}
