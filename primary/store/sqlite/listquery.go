package sqlite

import "strings"

// listLimit is a list's row limit: zero means 100; at most 1000.
func listLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return 100, nil
	case limit < 0 || limit > 1000:
		return 0, invalid("limit must be 1..1000")
	}
	return limit, nil
}

// conditions builds a list query's WHERE clause from the filters that are set.
type conditions struct {
	where []string
	args  []any
}

// add adds cond, with the arguments of its placeholders.
func (c *conditions) add(cond string, args ...any) {
	c.where = append(c.where, cond)
	c.args = append(c.args, args...)
}

// equal adds `column = value` when value is set.
func (c *conditions) equal(column, value string) {
	if value != "" {
		c.add(column+" = ?", value)
	}
}

// conversation adds the conversation when channel is set (an empty thread is the channel's
// main timeline).
func (c *conditions) conversation(channel, thread string) {
	if channel != "" {
		c.add("channel = ? AND thread = ?", channel, thread)
	}
}

// sql is the clause: "1" when no filter is set.
func (c *conditions) sql() string {
	if len(c.where) == 0 {
		return "1"
	}
	return strings.Join(c.where, " AND ")
}
