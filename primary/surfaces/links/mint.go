package links

import (
	"context"
	"slices"
	"time"

	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/threadfeed"
)

// Prefix is where the REST listener serves the links: a link is Settings.BaseURL, Prefix and
// its token.
const Prefix = "/v1/links/"

// Link is one decision a person may take by opening URL until ExpiresAt.
type Link struct {
	Decision  threadfeed.Action
	URL       string
	ExpiresAt time.Time
}

// Minter mints decision links. It is safe for concurrent use.
type Minter struct {
	feed     *threadfeed.Feed
	key      Key
	settings Settings
	clock    clock.Clock
}

// NewMinter returns the minter of settings (validated) signing with key; clk is the
// primary's clock, which the handler shares.
func NewMinter(feed *threadfeed.Feed, key Key, settings Settings, clk clock.Clock) *Minter {
	return &Minter{feed: feed, key: key, settings: settings, clock: clk}
}

// Mint returns one link for each decision the person id is linked to may take on the item
// key names now (threadfeed.Feed.Choices), in the item's order of actions, less a comment,
// which needs a text a link cannot carry. It refuses as Choices does (PermissionDenied,
// InvalidArgument, Conflict for a closed item naming who closed it), and with
// FailedPrecondition while no base URL is configured.
func (m *Minter) Mint(ctx context.Context, id threadfeed.Identity, key string) ([]Link, error) {
	if !m.settings.On() {
		return nil, fault.New(fault.FailedPrecondition,
			"decision links are off: set the primary's --decision-link-base (MINDROOM_DECISION_LINK_BASE) to the public https origin of its REST listener")
	}
	_, allowed, err := m.feed.Choices(ctx, id, key)
	if err != nil {
		return nil, err
	}
	allowed = slices.DeleteFunc(allowed, func(a threadfeed.Action) bool { return a == threadfeed.ActionComment })
	expires := m.clock.Now().Add(m.settings.Expiry).Truncate(time.Second)
	out := make([]Link, 0, len(allowed))
	for _, a := range allowed {
		token := m.key.sign(claims{Item: key, Surface: id.Surface, User: id.ChatUserID, Decision: string(a), Expires: expires.Unix()})
		out = append(out, Link{Decision: a, URL: m.settings.BaseURL + Prefix + token, ExpiresAt: expires.UTC()})
	}
	return out, nil
}
