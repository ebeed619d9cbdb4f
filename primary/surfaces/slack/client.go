package slack

import (
	"context"
	"fmt"

	goslack "github.com/slack-go/slack"
)

// Client posts and closes cards and posts reports through the Slack Web API.
type Client struct {
	api *goslack.Client
}

// NewClient wraps a Slack Web API client holding the bot token.
func NewClient(api *goslack.Client) *Client { return &Client{api: api} }

// Post posts an open card as a reply in its thread and returns the message's ts. The message
// carries the card's delivery id in its metadata, so FindCard can find it if the caller crashed
// before recording the ts.
func (c *Client) Post(ctx context.Context, card Card) (string, error) {
	if err := card.validate(); err != nil {
		return "", err
	}
	r := render(card, nil)
	_, ts, err := c.api.PostMessageContext(ctx, card.Channel,
		goslack.MsgOptionText(r.fallback, false),
		goslack.MsgOptionBlocks(r.blocks...),
		goslack.MsgOptionTS(card.ThreadTS),
		goslack.MsgOptionMetadata(deliveryMetadata(cardEvent, card.ItemKey, card.DeliveryID)),
		goslack.MsgOptionDisableLinkUnfurl(),
		goslack.MsgOptionDisableMediaUnfurl())
	if err != nil {
		return "", fmt.Errorf("post %s: %w", card.ItemKey, err)
	}
	return ts, nil
}

// Close rewrites the card's message at ts as the same card without buttons and with a line
// saying how, by whom and when it was settled. The message depends only on card and closing, so
// closing twice (after a retry or a restart) reads the same.
func (c *Client) Close(ctx context.Context, card Card, ts string, closing Closing) error {
	if err := card.validate(); err != nil {
		return err
	}
	r := render(card, &closing)
	_, _, _, err := c.api.UpdateMessageContext(ctx, card.Channel, ts,
		goslack.MsgOptionText(r.fallback, false),
		goslack.MsgOptionBlocks(r.blocks...),
		goslack.MsgOptionMetadata(deliveryMetadata(cardEvent, card.ItemKey, card.DeliveryID)))
	if err != nil {
		return fmt.Errorf("close %s: %w", card.ItemKey, err)
	}
	return nil
}
