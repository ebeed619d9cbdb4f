package surfaces

import (
	"context"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/threadfeed"
)

// Surface is one chat system as the delivery sees it: an adapter that shows the feed's items
// in the threads it serves.
type Surface interface {
	// Name is the surface's name in identity links and its saved records ("matrix").
	Name() string
	// Serves reports whether the conversation's thread lives on this surface; items of other
	// conversations are passed over.
	Serves(channel, thread string) bool
	// View is how the surface reads the feed: its card and chunk sizes.
	View() threadfeed.View
	// Show shows the item in its thread: it posts its card when shown is zero (the item has
	// none on the surface yet), and edits the card shown otherwise. It returns the card's
	// message id. Showing the same event again after a crash must not show it twice.
	Show(ctx context.Context, it threadfeed.Item, shown store.SurfaceCard) (messageID string, err error)
	// Report posts one chunk of a finished item's report under its card, in order.
	Report(ctx context.Context, card store.SurfaceCard, c threadfeed.Chunk) error
}

// Observer hears each delivery's outcome: what was delivered ("card", "report") and its
// error, nil when it was shown. Metrics implement it.
type Observer interface {
	Delivered(surface, what string, err error)
}
