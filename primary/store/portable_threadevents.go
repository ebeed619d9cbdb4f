package store

import (
	"context"
	"strconv"
	"time"
)

// ListThreadEvents implements ThreadEvents.
func (p *Portable) ListThreadEvents(ctx context.Context, f ThreadEventFilter) ([]ThreadEvent, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if f.After < 0 {
		return nil, invalid("a thread feed position cannot be negative")
	}
	if f.Channel == "" && f.Thread != "" {
		return nil, invalid("a thread needs its channel")
	}
	return p.d.ListThreadEvents(ctx, f)
}

// tellThread appends the event of a change of item (kind, id) to the thread feed, in tx.
func tellThread(ctx context.Context, tx Tx, kind ThreadItemKind, id int64, change ThreadChange, at time.Time) {
	tx.QueueThreadEvent(ctx, NewThreadEvent{Kind: kind, Key: strconv.FormatInt(id, 10), Change: change}, at)
}
