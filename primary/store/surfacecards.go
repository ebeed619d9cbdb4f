package store

import (
	"context"
	"time"

	"github.com/turncli/turncli/internal/fieldrule"
)

// SurfaceCards keeps what each chat surface has delivered of the thread feed: the message
// that shows each item there, and the surface's positions (how far through the feed it has
// delivered, how far through its own event stream it has read). A surface restarted resumes
// from its positions, and finds the message to edit when an item changes or closes. A card
// and the position past the event it shows are saved in one transaction, so a crash between
// the two cannot make a surface skip an event or post an item twice.
type SurfaceCards interface {
	// SurfaceCard returns the card showing the item on the surface; ErrNotFound when none.
	SurfaceCard(ctx context.Context, surface, itemKey string) (SurfaceCard, error)
	// SurfaceCardByMessage returns the card a surface's message is; ErrNotFound when the
	// message is none of the surface's cards.
	SurfaceCardByMessage(ctx context.Context, surface, messageID string) (SurfaceCard, error)
	// SurfacePosition returns the surface's position of the name; ErrNotFound when none
	// was saved.
	SurfacePosition(ctx context.Context, surface, name string) (SurfacePosition, error)
	// SaveSurfaceDelivery stores the cards and positions in one transaction, each replacing
	// the one of its key.
	SaveSurfaceDelivery(ctx context.Context, d SurfaceDelivery) error
}

// SurfaceCard is the message showing one item of the feed on one surface.
type SurfaceCard struct {
	Surface string
	// ItemKey names the item as the feed does ("approval/7").
	ItemKey string
	// Room and Thread are where the message is (a Matrix room and thread root, a Slack
	// channel and thread timestamp).
	Room, Thread string
	// MessageID is the surface's id of the message (a Matrix event id, a Slack timestamp).
	MessageID string
	// Shown is the id of the feed event the message shows now; an event at or below it
	// changes nothing.
	Shown     int64
	UpdatedAt time.Time
}

// SurfacePosition is a named place a surface has reached, as the surface writes it: the feed
// cursor it has delivered through ("feed"), the token of its own event stream ("sync").
type SurfacePosition struct {
	Surface   string
	Name      string
	Value     string
	UpdatedAt time.Time
}

// SurfaceDelivery is what a surface saves after delivering: the cards as they now show, and
// its positions past what it delivered.
type SurfaceDelivery struct {
	Cards     []SurfaceCard
	Positions []SurfacePosition
}

// Limits of a surface's records: they are ids a chat system made, and the feed's cursors.
const (
	MaxSurfaceItemKey   = 64
	MaxSurfaceMessageID = 255
	MaxSurfaceRoom      = 255
	MaxSurfaceThread    = 255
	MaxPositionName     = 32
	MaxPositionValue    = 4096
)

// checkSurfaceCard enforces SurfaceCard's limits.
func checkSurfaceCard(c SurfaceCard) error {
	if err := fieldrule.Check(fieldrule.Surface, "surface", c.Surface); err != nil {
		return invalid("%v", err)
	}
	for _, f := range []struct {
		name, value string
		min, max    int
	}{
		{"item key", c.ItemKey, 1, MaxSurfaceItemKey},
		{"room", c.Room, 1, MaxSurfaceRoom},
		{"thread", c.Thread, 0, MaxSurfaceThread},
		{"message id", c.MessageID, 1, MaxSurfaceMessageID},
	} {
		if len(f.value) < f.min || len(f.value) > f.max {
			return invalid("a surface card's %s is %d..%d bytes, not %d", f.name, f.min, f.max, len(f.value))
		}
	}
	if c.Shown < 0 {
		return invalid("a surface card cannot show a negative feed event")
	}
	return nil
}

// checkSurfacePosition enforces SurfacePosition's limits.
func checkSurfacePosition(surface, name, value string) error {
	if err := fieldrule.Check(fieldrule.Surface, "surface", surface); err != nil {
		return invalid("%v", err)
	}
	if len(name) < 1 || len(name) > MaxPositionName {
		return invalid("a surface position's name is 1..%d bytes, not %d", MaxPositionName, len(name))
	}
	if len(value) > MaxPositionValue {
		return invalid("a surface position is at most %d bytes, not %d", MaxPositionValue, len(value))
	}
	return nil
}
