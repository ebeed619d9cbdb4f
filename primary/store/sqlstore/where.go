package sqlstore

import (
	"strings"
	"time"
)

// conditions is the WHERE clause of a list query, built from the filters a list request sets
// and the keyset of its page; its zero value has none. Its placeholders are "?", bound with
// the rest of the statement; the statement's own arguments (a LIMIT) follow Args.
type conditions struct {
	where []string
	Args  []any
}

// Add adds cond with the arguments of its placeholders.
func (c *conditions) Add(cond string, args ...any) {
	c.Args = append(c.Args, args...)
	c.where = append(c.where, cond)
}

// Equal adds `column = value` when value is set.
func (c *conditions) Equal(column, value string) {
	if value != "" {
		c.Add(column+" = ?", value)
	}
}

// Conversation adds the conversation when channel is set (an empty thread is the channel's
// main timeline).
func (c *conditions) Conversation(channel, thread string) {
	if channel != "" {
		c.Add("channel = ? AND thread = ?", channel, thread)
	}
}

// BeforeID adds `id < before` when before is set: the keyset of a list newest first by id.
func (c *conditions) BeforeID(before int64) {
	if before > 0 {
		c.Add("id < ?", before)
	}
}

// AfterTime adds the keyset of a list ordered by a time column (stored as Unix nanoseconds)
// descending, then by key columns ascending: only rows strictly after (at, key) in that order.
// Nothing when at is zero (the first page).
func (c *conditions) AfterTime(timeColumn string, at time.Time, keyColumns []string, key []any) {
	if at.IsZero() {
		return
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(key)), ", ")
	c.Add("("+timeColumn+" < ? OR ("+timeColumn+" = ? AND ("+strings.Join(keyColumns, ", ")+") > ("+marks+")))",
		append([]any{at.UnixNano(), at.UnixNano()}, key...)...)
}

// SQL is the clause; TRUE when no filter is set.
func (c *conditions) SQL() string {
	if len(c.where) == 0 {
		return "TRUE"
	}
	return strings.Join(c.where, " AND ")
}
