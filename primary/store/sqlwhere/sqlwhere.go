// Package sqlwhere builds the WHERE clauses of the store drivers' list queries: the filters a
// list request sets, and the keyset of its page. One home for every SQL driver; each names
// its dialect (how a placeholder is written, and what "no filter" is).
package sqlwhere

import (
	"strconv"
	"strings"
	"time"
)

// Dialect is how a driver's SQL writes the n-th placeholder (from 1) and a clause that is
// always true.
type Dialect interface {
	Mark(n int) string
	True() string
}

// Unbound writes placeholders "?" for the caller to bind in its database's dialect when it
// binds the whole statement (package sqlstore), and TRUE, which both databases read.
type Unbound struct{}

func (Unbound) Mark(int) string { return "?" }
func (Unbound) True() string    { return "TRUE" }

// SQLite writes placeholders "?".
type SQLite struct{}

func (SQLite) Mark(int) string { return "?" }
func (SQLite) True() string    { return "1" }

// PostgreSQL numbers its placeholders $1, $2…
type PostgreSQL struct{}

func (PostgreSQL) Mark(n int) string { return "$" + strconv.Itoa(n) }
func (PostgreSQL) True() string      { return "true" }

// Conditions is a WHERE clause built from the filters that are set; its zero value has none.
// A statement's own parameters follow its arguments (Next).
type Conditions[D Dialect] struct {
	where []string
	Args  []any
}

// Add adds cond, whose placeholders are written "?", with their arguments.
func (c *Conditions[D]) Add(cond string, args ...any) {
	var d D
	for _, a := range args {
		c.Args = append(c.Args, a)
		if mark := d.Mark(len(c.Args)); mark != "?" {
			cond = strings.Replace(cond, "?", mark, 1)
		}
	}
	c.where = append(c.where, cond)
}

// Next is the placeholder of the next argument after the conditions' own.
func (c *Conditions[D]) Next() string {
	var d D
	return d.Mark(len(c.Args) + 1)
}

// Equal adds `column = value` when value is set.
func (c *Conditions[D]) Equal(column, value string) {
	if value != "" {
		c.Add(column+" = ?", value)
	}
}

// Conversation adds the conversation when channel is set (an empty thread is the channel's
// main timeline).
func (c *Conditions[D]) Conversation(channel, thread string) {
	if channel != "" {
		c.Add("channel = ? AND thread = ?", channel, thread)
	}
}

// BeforeID adds `id < before` when before is set: the keyset of a list newest first by id.
func (c *Conditions[D]) BeforeID(before int64) {
	if before > 0 {
		c.Add("id < ?", before)
	}
}

// AfterTime adds the keyset of a list ordered by a time column (stored as Unix nanoseconds)
// descending, then by key columns ascending: only rows strictly after (at, key) in that order.
// Nothing when at is zero (the first page).
func (c *Conditions[D]) AfterTime(timeColumn string, at time.Time, keyColumns []string, key []any) {
	if at.IsZero() {
		return
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(key)), ", ")
	c.Add("("+timeColumn+" < ? OR ("+timeColumn+" = ? AND ("+strings.Join(keyColumns, ", ")+") > ("+marks+")))",
		append([]any{at.UnixNano(), at.UnixNano()}, key...)...)
}

// SQL is the clause; always true when no filter is set.
func (c *Conditions[D]) SQL() string {
	if len(c.where) == 0 {
		var d D
		return d.True()
	}
	return strings.Join(c.where, " AND ")
}
