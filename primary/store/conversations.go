package store

import (
	"context"
	"fmt"
	"time"
)

// Conversations lists the conversations the store holds records of, for people who look for
// one (the dashboard's Conversations view).
type Conversations interface {
	// ListConversations returns the conversations with a stored conversation mode or shell
	// mode, jobs, durable approvals, call approvals, prompts or question forms, most recently
	// active first (then by channel and thread), at most limit (1..1000; 0 means 100).
	// Records without a channel name no conversation and are left out.
	ListConversations(ctx context.Context, limit int) ([]ConversationSummary, error)
}

// ConversationSummary is one conversation the store holds records of.
type ConversationSummary struct {
	// Channel and Thread name it (an empty thread is the channel's main timeline).
	Channel, Thread string
	// Mode is its conversation mode: ModeAsk with a zero UpdatedAt when never set.
	Mode ModeSetting
	// LastActivity is when its newest record was created or one of its modes last set.
	LastActivity time.Time
}

// conversationActivity is the query both drivers run for ListConversations, but for the
// placeholder of its limit (%s): every table whose records belong to a conversation gives the
// times they were created or set, grouped by conversation, with the stored mode joined. It
// reads every such record: fine for a person's page, not for a hot path.
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
	ORDER BY a.last DESC, a.channel, a.thread LIMIT %s`

// ConversationActivityQuery is conversationActivity with limit's placeholder, for a driver.
func ConversationActivityQuery(placeholder string) string {
	return fmt.Sprintf(conversationActivity, placeholder)
}

// ListConversations implements Conversations.
func (p *Portable) ListConversations(ctx context.Context, limit int) ([]ConversationSummary, error) {
	limit, err := listLimit(limit)
	if err != nil {
		return nil, err
	}
	list, err := p.d.ListConversations(ctx, limit)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].Mode.Mode == "" { // never set: the default
			list[i].Mode = ModeSetting{Mode: ModeAsk}
		}
	}
	return list, nil
}
