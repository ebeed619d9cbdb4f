package store

import (
	"context"
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
