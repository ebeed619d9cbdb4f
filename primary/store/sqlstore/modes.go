package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// ConversationMode implements store.Reader.
func (r Reader) ConversationMode(ctx context.Context, channel, thread string) (store.ModeSetting, error) {
	var m store.ModeSetting
	var mode string
	var updated int64
	err := r.queryRow(ctx, `SELECT mode, updated_at, updated_by FROM conversation_modes
		WHERE channel = ? AND thread = ?`, channel, thread).Scan(&mode, &updated, &m.UpdatedBy)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ModeSetting{}, fmt.Errorf("%w: no mode of the conversation", store.ErrNotFound)
	case err != nil:
		return store.ModeSetting{}, fmt.Errorf("store: conversation mode: %w", err)
	}
	m.Mode, m.UpdatedAt = store.Mode(mode), fromNanos(updated)
	return m, nil
}

// PutConversationMode implements store.Tx.
func (t *Tx) PutConversationMode(ctx context.Context, channel, thread string, m store.ModeSetting) error {
	_, err := t.exec(ctx, "set conversation mode", `INSERT INTO conversation_modes (channel, thread, mode, updated_at, updated_by)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (channel, thread) DO UPDATE
		SET mode = excluded.mode, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
		channel, thread, string(m.Mode), nanos(m.UpdatedAt), m.UpdatedBy)
	return err
}

// ShellMode implements store.Reader.
func (r Reader) ShellMode(ctx context.Context, channel, thread, agent string) (store.ShellModeSetting, error) {
	var m store.ShellModeSetting
	var mode string
	var updated int64
	var workerKey *string
	err := r.queryRow(ctx, `SELECT mode, worker_key, updated_at, updated_by FROM shell_modes
		WHERE channel = ? AND thread = ? AND agent = ?`, channel, thread, agent).Scan(&mode, &workerKey, &updated, &m.UpdatedBy)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ShellModeSetting{}, fmt.Errorf("%w: no shell mode of the agent", store.ErrNotFound)
	case err != nil:
		return store.ShellModeSetting{}, fmt.Errorf("store: shell mode: %w", err)
	}
	m.Mode, m.UpdatedAt = store.ShellMode(mode), fromNanos(updated)
	if workerKey == nil {
		m.Unplaced = true
	} else {
		m.WorkerKey = *workerKey
	}
	return m, nil
}

// PutShellMode implements store.Tx.
func (t *Tx) PutShellMode(ctx context.Context, channel, thread, agent string, m store.ShellModeSetting) error {
	_, err := t.exec(ctx, "set shell mode", `INSERT INTO shell_modes (channel, thread, agent, mode, worker_key, updated_at, updated_by)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (channel, thread, agent) DO UPDATE
		SET mode = excluded.mode, worker_key = excluded.worker_key, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
		channel, thread, agent, string(m.Mode), m.WorkerKey, nanos(m.UpdatedAt), m.UpdatedBy)
	return err
}

// DeleteShellMode implements store.Tx.
func (t *Tx) DeleteShellMode(ctx context.Context, channel, thread, agent string) error {
	_, err := t.exec(ctx, "reset shell mode", `DELETE FROM shell_modes WHERE channel = ? AND thread = ? AND agent = ?`,
		channel, thread, agent)
	return err
}

// conversationActivity is the query of ListConversations: every table whose records belong to
// a conversation gives the times they were created or set, grouped by conversation, with the
// stored mode joined. It reads every such record: fine for a person's page, not for a hot path.
const conversationActivity = `SELECT a.channel, a.thread, a.last, COALESCE(m.mode, ''), COALESCE(m.updated_at, 0), COALESCE(m.updated_by, '')
	FROM (SELECT channel, thread, MAX(at) AS last FROM (
			SELECT channel, thread, updated_at AS at FROM conversation_modes
			UNION ALL SELECT channel, thread, updated_at FROM shell_modes
			UNION ALL SELECT channel, thread, created_at FROM jobs
			UNION ALL SELECT channel, thread, created_at FROM approvals
			UNION ALL SELECT channel, thread, created_at FROM call_approvals
			UNION ALL SELECT channel, thread, created_at FROM prompts
			UNION ALL SELECT channel, thread, updated_at FROM question_requests
		) AS activity WHERE channel <> '' GROUP BY channel, thread) AS a
	LEFT JOIN conversation_modes m ON m.channel = a.channel AND m.thread = a.thread
	ORDER BY a.last DESC, a.channel, a.thread LIMIT ?`

// ListConversations implements store.Reader.
func (r Reader) ListConversations(ctx context.Context, limit int) ([]store.ConversationSummary, error) {
	rows, err := r.query(ctx, conversationActivity, r.limit(limit))
	if err != nil {
		return nil, fmt.Errorf("store: list conversations: %w", err)
	}
	out, err := collect(rows, func(row Row) (store.ConversationSummary, error) {
		var c store.ConversationSummary
		var mode string
		var last, updated int64
		err := row.Scan(&c.Channel, &c.Thread, &last, &mode, &updated, &c.Mode.UpdatedBy)
		c.LastActivity, c.Mode.Mode = fromNanos(last), store.Mode(mode)
		if updated != 0 {
			c.Mode.UpdatedAt = fromNanos(updated)
		}
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list conversations: %w", err)
	}
	return out, nil
}
