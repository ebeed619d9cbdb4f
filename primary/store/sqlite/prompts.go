package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/turncli/turncli/primary/store"
)

// CreatePrompt implements store.Prompts.
func (s *Store) CreatePrompt(ctx context.Context, p store.NewPrompt) (store.Prompt, error) {
	masked, err := checkNewPrompt(p)
	if err != nil {
		return store.Prompt{}, err
	}
	var out store.Prompt
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO prompts (kind, channel, thread, requester, agent, response_id, call_id,
			title, details, approve_label, deny_label, tool_name, tool_use_id, masked_input, status, created_at, deadline)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) RETURNING id`,
			string(p.Kind), p.Channel, p.Thread, p.Requester, p.Agent, p.ResponseID, p.CallID,
			p.Title, p.Details, p.ApproveLabel, p.DenyLabel, p.ToolName, p.ToolUseID, masked,
			nanos(s.now()), nanos(p.Deadline)).Scan(&id); err != nil {
			return fmt.Errorf("store: create prompt: %w", err)
		}
		out, err = promptIn(ctx, tx, id)
		return err
	})
	return out, err
}

// checkNewPrompt applies the rules of store.NewPrompt and returns the masked input as stored
// (compacted; nil for an approval).
func checkNewPrompt(p store.NewPrompt) (masked any, err error) {
	switch {
	case !p.Kind.Valid():
		return nil, invalid("prompt kind %q is not approval or permission", p.Kind)
	case p.Channel == "":
		return nil, invalid("a prompt needs a channel")
	case p.Deadline.IsZero():
		return nil, invalid("a prompt needs a deadline")
	}
	for _, f := range []struct {
		what, text  string
		least, most int
	}{
		{"an approval's title", p.Title, 0, store.MaxPromptTitle}, {"an approval's details", p.Details, 0, store.MaxPromptDetails},
		{"an approval's approve label", p.ApproveLabel, 0, store.MaxPromptLabel},
		{"an approval's deny label", p.DenyLabel, 0, store.MaxPromptLabel},
		{"a tool name", p.ToolName, 0, store.MaxToolName}, {"a tool use id", p.ToolUseID, 0, store.MaxToolName},
	} {
		if err := checkChars(f.what, f.text, f.least, f.most); err != nil {
			return nil, err
		}
	}
	if p.Kind == store.PromptApproval {
		if p.Details == "" || p.Title == "" || p.ApproveLabel == "" || p.DenyLabel == "" {
			return nil, invalid("an approval needs details, a title and both labels")
		}
		if p.ToolName != "" || p.ToolUseID != "" || p.MaskedInput != nil {
			return nil, invalid("an approval has no tool")
		}
		return nil, nil
	}
	if p.ToolName == "" {
		return nil, invalid("a permission prompt needs a tool name")
	}
	if p.Title != "" || p.Details != "" || p.ApproveLabel != "" || p.DenyLabel != "" {
		return nil, invalid("a permission prompt has no approval texts")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, p.MaskedInput); err != nil {
		return nil, invalid("a permission prompt's input must be one JSON value")
	}
	return buf.String(), nil
}

// checkChars checks that text is valid UTF-8 of least..most characters.
func checkChars(what, text string, least, most int) error {
	if !utf8.ValidString(text) {
		return invalid("%s must be valid UTF-8", what)
	}
	if n := utf8.RuneCountInString(text); n < least || n > most {
		return invalid("%s is %d characters; %d..%d are allowed", what, n, least, most)
	}
	return nil
}

// Prompt implements store.Prompts.
func (s *Store) Prompt(ctx context.Context, id int64) (store.Prompt, error) {
	return promptIn(ctx, s.read, id)
}

// ListPrompts implements store.Prompts.
func (s *Store) ListPrompts(ctx context.Context, f store.PromptFilter) ([]store.Prompt, error) {
	limit, err := listLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return nil, invalid("prompt status %q is unknown", f.Status)
	}
	if f.Kind != "" && !f.Kind.Valid() {
		return nil, invalid("prompt kind %q is unknown", f.Kind)
	}
	var c conditions
	c.equal("status", string(f.Status))
	c.equal("kind", string(f.Kind))
	c.conversation(f.Channel, f.Thread)
	return queryPrompts(ctx, s.read, c.sql(), c.args, limit)
}

// promptIn returns prompt id read through q; ErrNotFound when it does not exist.
func promptIn(ctx context.Context, q querier, id int64) (store.Prompt, error) {
	ps, err := queryPrompts(ctx, q, "id = ?", []any{id}, 1)
	if err != nil {
		return store.Prompt{}, err
	}
	if len(ps) == 0 {
		return store.Prompt{}, fmt.Errorf("%w: prompt %d", store.ErrNotFound, id)
	}
	return ps[0], nil
}

const promptColumns = `id, kind, channel, thread, requester, agent, response_id, call_id, title, details, approve_label,
	deny_label, tool_name, tool_use_id, masked_input, status, created_at, deadline, decided_by, decided_at, decision, feedback`

// queryPrompts returns up to limit prompts matching where (a condition on the prompts table),
// newest first.
func queryPrompts(ctx context.Context, q querier, where string, args []any, limit int) ([]store.Prompt, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+promptColumns+` FROM prompts WHERE `+where+` ORDER BY id DESC LIMIT ?`,
		append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: prompts: %w", err)
	}
	defer rows.Close()
	var out []store.Prompt
	for rows.Next() {
		var p store.Prompt
		var kind, status string
		var masked sql.NullString
		var created, deadline int64
		var decided sql.NullInt64
		if err := rows.Scan(&p.ID, &kind, &p.Channel, &p.Thread, &p.Requester, &p.Agent, &p.ResponseID, &p.CallID,
			&p.Title, &p.Details, &p.ApproveLabel, &p.DenyLabel, &p.ToolName, &p.ToolUseID, &masked, &status,
			&created, &deadline, &p.DecidedBy, &decided, &p.Decision, &p.Feedback); err != nil {
			return nil, fmt.Errorf("store: prompts: %w", err)
		}
		p.Kind, p.Status = store.PromptKind(kind), store.PromptStatus(status)
		if masked.Valid {
			p.MaskedInput = json.RawMessage(masked.String)
		}
		p.CreatedAt, p.Deadline = fromNanos(created), fromNanos(deadline)
		if decided.Valid {
			p.DecidedAt = fromNanos(decided.Int64)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: prompts: %w", err)
	}
	return out, nil
}
