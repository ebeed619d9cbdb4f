package slack

import (
	"context"
	"fmt"

	goslack "github.com/slack-go/slack"
)

// The metadata event types of the messages this package posts. chat.postMessage has no
// idempotency key; the delivery id in the metadata is how a message is found again.
const (
	cardEvent   = "turncli_card"
	reportEvent = "turncli_report"
)

func deliveryMetadata(eventType, itemKey, deliveryID string) goslack.SlackMetadata {
	payload := map[string]any{"delivery_id": deliveryID}
	if itemKey != "" {
		payload["item_key"] = itemKey
	}
	return goslack.SlackMetadata{EventType: eventType, EventPayload: payload}
}

// repliesPage is how many replies FindCard asks for at a time (Slack's maximum is 1000, its
// recommendation 200).
const repliesPage = 200

// FindCard looks through the thread's replies for the message (card or report chunk) this
// package posted with deliveryID, and returns its ts. Call it before posting again a delivery
// whose outcome is unknown, so a crash between posting and recording never posts twice.
func (c *Client) FindCard(ctx context.Context, channel, thread, deliveryID string) (string, bool, error) {
	if deliveryID == "" {
		return "", false, fmt.Errorf("find delivery: %w: no delivery id", ErrInvalidCard)
	}
	params := &goslack.GetConversationRepliesParameters{
		ChannelID: channel, Timestamp: thread, Limit: repliesPage, IncludeAllMetadata: true,
	}
	for {
		msgs, more, next, err := c.api.GetConversationRepliesContext(ctx, params)
		if err != nil {
			return "", false, fmt.Errorf("find delivery %s: %w", deliveryID, err)
		}
		for _, m := range msgs {
			md := m.Metadata
			if (md.EventType == cardEvent || md.EventType == reportEvent) && md.EventPayload["delivery_id"] == deliveryID {
				return m.Timestamp, true, nil
			}
		}
		if !more || next == "" {
			return "", false, nil
		}
		params.Cursor = next
	}
}
