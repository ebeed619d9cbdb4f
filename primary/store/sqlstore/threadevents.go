package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// threadItemRecords is where each kind of item's record is, and its key column: the event's
// conversation is read from it.
var threadItemRecords = map[store.ThreadItemKind]struct{ table, key string }{
	store.ThreadApproval:     {"approvals", "id"},
	store.ThreadPrompt:       {"prompts", "id"},
	store.ThreadCallApproval: {"call_approvals", "id"},
	store.ThreadQuestion:     {"question_requests", "id"},
	store.ThreadProgress:     {"progress_snapshots", "response_id"},
	store.ThreadJob:          {"jobs", "id"},
}

// QueueThreadEvent implements store.Tx: one INSERT … SELECT from the item's record, after the
// dialect's ContinuationOrder, which orders the feed's ids by commit as the outbox's. An item
// of no conversation (a call made outside any, with no channel) has no thread to be told in.
func (t *Tx) QueueThreadEvent(ctx context.Context, e store.NewThreadEvent, at time.Time) {
	rec, ok := threadItemRecords[e.Kind]
	if !ok {
		// Portable names only the kinds above; a new kind needs its record here.
		panic(fmt.Sprintf("store: no record of thread item kind %q", e.Kind))
	}
	if order := t.d.ContinuationOrder(); order.SQL != "" {
		t.c.Queue(ctx, discard, order.SQL, order.Args...)
	}
	key := any(e.Key)
	if rec.key == "id" {
		id, err := strconv.ParseInt(e.Key, 10, 64)
		if err != nil {
			id = -1 // names no record
		}
		key = id
	}
	// The time is cast: a parameter in a SELECT list has no column to take its type from.
	t.c.Queue(ctx, discard, t.d.Bind(`INSERT INTO thread_events (at, channel, thread, kind, key, change)
		SELECT CAST(? AS BIGINT), channel, thread, ?, ?, ? FROM `+rec.table+` WHERE `+rec.key+` = ? AND channel <> ''`),
		nanos(at), string(e.Kind), e.Key, string(e.Change), key)
}

// ListThreadEvents implements store.Reader.
func (r Reader) ListThreadEvents(ctx context.Context, f store.ThreadEventFilter) ([]store.ThreadEvent, error) {
	var c conditions
	c.Conversation(f.Channel, f.Thread)
	rows, err := r.query(ctx, `SELECT id, at, channel, thread, kind, key, change FROM thread_events
		WHERE id > ? AND `+c.SQL()+` ORDER BY id LIMIT ?`, append([]any{f.After}, append(c.Args, r.limit(f.Limit))...)...)
	if err != nil {
		return nil, fmt.Errorf("store: thread events: %w", err)
	}
	out, err := collect(rows, func(row Row) (store.ThreadEvent, error) {
		var e store.ThreadEvent
		var at int64
		var kind, change string
		err := row.Scan(&e.ID, &at, &e.Channel, &e.Thread, &kind, &e.Key, &change)
		e.At, e.Kind, e.Change = fromNanos(at), store.ThreadItemKind(kind), store.ThreadChange(change)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: thread events: %w", err)
	}
	return out, nil
}
