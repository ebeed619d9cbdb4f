package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// SaveProgress implements store.Progress: one upsert, so a snapshot is replaced whole.
func (s *Store) SaveProgress(ctx context.Context, p store.ProgressSnapshot) error {
	switch {
	case p.ResponseID == "":
		return invalid("a progress snapshot needs a response id")
	case p.Channel == "":
		return invalid("a progress snapshot needs a channel")
	case p.Title == "":
		return invalid("a progress snapshot needs a title")
	}
	steps, err := compactJSON("progress steps", p.Steps, '[')
	if err != nil {
		return err
	}
	if string(steps) == "[]" {
		return invalid("a progress snapshot needs at least one step")
	}
	at := p.UpdatedAt
	if at.IsZero() {
		at = s.now()
	}
	_, err = s.write.ExecContext(ctx, `INSERT INTO progress_snapshots (response_id, channel, thread, agent, requester,
		title, steps, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (response_id) DO UPDATE SET channel = excluded.channel, thread = excluded.thread,
		agent = excluded.agent, requester = excluded.requester, title = excluded.title, steps = excluded.steps,
		updated_at = excluded.updated_at`,
		p.ResponseID, p.Channel, p.Thread, p.Agent, p.Requester, p.Title, string(steps), nanos(at))
	if err != nil {
		return fmt.Errorf("store: save progress: %w", err)
	}
	return nil
}

// ListProgress implements store.Progress.
func (s *Store) ListProgress(ctx context.Context, f store.ProgressFilter) ([]store.ProgressSnapshot, error) {
	limit, err := listLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	var c conditions
	c.equal("response_id", f.ResponseID)
	c.conversation(f.Channel, f.Thread)
	rows, err := s.read.QueryContext(ctx, `SELECT response_id, channel, thread, agent, requester, title, steps, updated_at
		FROM progress_snapshots WHERE `+c.sql()+` ORDER BY updated_at DESC, response_id LIMIT ?`, append(c.args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: list progress: %w", err)
	}
	defer rows.Close()
	var out []store.ProgressSnapshot
	for rows.Next() {
		var p store.ProgressSnapshot
		var steps string
		var at int64
		if err := rows.Scan(&p.ResponseID, &p.Channel, &p.Thread, &p.Agent, &p.Requester, &p.Title, &steps, &at); err != nil {
			return nil, fmt.Errorf("store: list progress: %w", err)
		}
		p.Steps, p.UpdatedAt = json.RawMessage(steps), fromNanos(at)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list progress: %w", err)
	}
	return out, nil
}
