package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// PutProgress implements store.Tx: one upsert, so a snapshot is replaced whole.
func (t *Tx) PutProgress(ctx context.Context, p store.ProgressSnapshot) error {
	_, err := t.exec(ctx, "save progress", `INSERT INTO progress_snapshots (response_id, channel, thread, agent, requester,
		title, steps, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (response_id) DO UPDATE SET channel = excluded.channel, thread = excluded.thread,
		agent = excluded.agent, requester = excluded.requester, title = excluded.title, steps = excluded.steps,
		updated_at = excluded.updated_at`,
		p.ResponseID, p.Channel, p.Thread, p.Agent, p.Requester, p.Title, string(p.Steps), nanos(p.UpdatedAt))
	return err
}

// ListProgress implements store.Reader.
func (r Reader) ListProgress(ctx context.Context, f store.ProgressFilter) ([]store.ProgressSnapshot, error) {
	var c conditions
	c.Equal("response_id", f.ResponseID)
	c.Conversation(f.Channel, f.Thread)
	c.AfterTime("updated_at", f.After.UpdatedAt, []string{"response_id"}, []any{f.After.ResponseID})
	rows, err := r.query(ctx, `SELECT response_id, channel, thread, agent, requester, title, steps, updated_at
		FROM progress_snapshots WHERE `+c.SQL()+` ORDER BY updated_at DESC, response_id LIMIT ?`,
		append(c.Args, r.limit(f.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: list progress: %w", err)
	}
	out, err := collect(rows, func(row Row) (store.ProgressSnapshot, error) {
		var p store.ProgressSnapshot
		var steps string
		var at int64
		err := row.Scan(&p.ResponseID, &p.Channel, &p.Thread, &p.Agent, &p.Requester, &p.Title, &steps, &at)
		p.Steps, p.UpdatedAt = json.RawMessage(steps), fromNanos(at)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list progress: %w", err)
	}
	return out, nil
}
