package store

import "time"

// Every list method reads one page by keyset, never by offset: its filter names the last
// record of the previous page (a position in the list's order, zero for the first page) and
// the page holds only records strictly after it. The order of each list is total (a record's
// id, or a time with the record's key breaking ties), so no record is skipped or repeated
// between pages however many are inserted meanwhile; a new record sorts first (newest first)
// and shows on a new first page. A record whose ordering time changes (a progress snapshot
// replaced, an allowance granted again) moves to the front like a new one.
//
// Lists ordered by id, newest first, take BeforeID: only records with a smaller id.

// ProgressPosition is a snapshot's place in ListProgress's order: most recently updated
// first, then by response id.
type ProgressPosition struct {
	UpdatedAt  time.Time
	ResponseID string
}

// IsZero reports whether p is the position before the first snapshot.
func (p ProgressPosition) IsZero() bool { return p.UpdatedAt.IsZero() && p.ResponseID == "" }

// AllowancePosition is an allowance's place in ListPermissionAllowances's order: most
// recently granted first, then by channel, thread, tool name and scope (its key).
type AllowancePosition struct {
	GrantedAt                        time.Time
	Channel, Thread, ToolName, Scope string
}

// IsZero reports whether p is the position before the first allowance.
func (p AllowancePosition) IsZero() bool { return p == AllowancePosition{} }

// checkBeforeID checks a BeforeID: zero for the first page, else a record's id.
func checkBeforeID(id int64) error {
	if id < 0 {
		return invalid("a page position must not be negative")
	}
	return nil
}

// checkTimePosition checks a position made of a time and a key: both zero (the first page),
// or a time and a non-empty key (a record's place).
func checkTimePosition(at time.Time, key string) error {
	if at.IsZero() != (key == "") {
		return invalid("a page position needs both its time and its key")
	}
	return nil
}
