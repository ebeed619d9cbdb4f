package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// ConversationMode implements store.Reader.
func (v view) ConversationMode(_ context.Context, channel, thread string) (store.ModeSetting, error) {
	defer v.read()()
	m, ok := v.s.conversationModes[conversation{channel, thread}]
	if !ok {
		return store.ModeSetting{}, fmt.Errorf("%w: no mode of the conversation", store.ErrNotFound)
	}
	return m, nil
}

// PutConversationMode implements store.Tx.
func (t *tx) PutConversationMode(_ context.Context, channel, thread string, m store.ModeSetting) error {
	m.UpdatedAt = stamp(m.UpdatedAt)
	put(t, t.s.conversationModes, conversation{channel, thread}, m)
	return nil
}

// ShellMode implements store.Reader.
func (v view) ShellMode(_ context.Context, channel, thread, agent string) (store.ShellModeSetting, error) {
	defer v.read()()
	m, ok := v.s.shellModes[agentInConversation{conversation{channel, thread}, agent}]
	if !ok {
		return store.ShellModeSetting{}, fmt.Errorf("%w: no shell mode of the agent", store.ErrNotFound)
	}
	return m, nil
}

// PutShellMode implements store.Tx. A mode stored now records its placement, so it is never
// Unplaced (only a mode older than placements is).
func (t *tx) PutShellMode(_ context.Context, channel, thread, agent string, m store.ShellModeSetting) error {
	m.Unplaced = false
	m.UpdatedAt = stamp(m.UpdatedAt)
	put(t, t.s.shellModes, agentInConversation{conversation{channel, thread}, agent}, m)
	return nil
}

// DeleteShellMode implements store.Tx.
func (t *tx) DeleteShellMode(_ context.Context, channel, thread, agent string) error {
	remove(t, t.s.shellModes, agentInConversation{conversation{channel, thread}, agent})
	return nil
}

// ListConversations implements store.Reader as sqlstore's conversationActivity query does: the
// latest time each conversation's records were created or set (the modes' and question
// requests' update times, the others' creation times), records without a channel left out,
// with its stored mode; most recently active first, then by channel and thread.
func (v view) ListConversations(_ context.Context, limit int) ([]store.ConversationSummary, error) {
	defer v.read()()
	s := v.s
	last := map[conversation]time.Time{}
	saw := func(channel, thread string, at time.Time) {
		if channel == "" {
			return
		}
		k := conversation{channel, thread}
		if prev, ok := last[k]; !ok || at.After(prev) {
			last[k] = at
		}
	}
	for k, m := range s.conversationModes {
		saw(k.channel, k.thread, m.UpdatedAt)
	}
	for k, m := range s.shellModes {
		saw(k.channel, k.thread, m.UpdatedAt)
	}
	for _, j := range s.jobs.rows {
		saw(j.Channel, j.Thread, j.CreatedAt)
	}
	for _, a := range s.approvals.rows {
		saw(a.Channel, a.Thread, a.CreatedAt)
	}
	for _, c := range s.callApprovals.rows {
		saw(c.Channel, c.Thread, c.CreatedAt)
	}
	for _, p := range s.prompts.rows {
		saw(p.Channel, p.Thread, p.CreatedAt)
	}
	for _, q := range s.questions.rows {
		saw(q.Channel, q.Thread, q.UpdatedAt)
	}
	out := make([]store.ConversationSummary, 0, len(last))
	for k, at := range last {
		// A conversation without a stored mode has the zero mode: the caller applies the
		// default.
		out = append(out, store.ConversationSummary{Channel: k.channel, Thread: k.thread, Mode: s.conversationModes[k], LastActivity: at})
	}
	slices.SortFunc(out, func(a, b store.ConversationSummary) int {
		return cmp.Or(b.LastActivity.Compare(a.LastActivity), cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Thread, b.Thread))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
