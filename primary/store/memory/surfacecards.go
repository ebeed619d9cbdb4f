package memory

import (
	"context"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// surfaceItem names a card: a surface's item.
type surfaceItem struct{ surface, itemKey string }

// surfacePlace names a position: a surface's name.
type surfacePlace struct{ surface, name string }

// SurfaceCard implements store.Reader.
func (v view) SurfaceCard(_ context.Context, surface, itemKey string) (store.SurfaceCard, error) {
	defer v.read()()
	c, ok := v.s.surfaceCards[surfaceItem{surface, itemKey}]
	if !ok {
		return store.SurfaceCard{}, fmt.Errorf("%w: surface card", store.ErrNotFound)
	}
	return c, nil
}

// SurfaceCardByMessage implements store.Reader.
func (v view) SurfaceCardByMessage(_ context.Context, surface, messageID string) (store.SurfaceCard, error) {
	defer v.read()()
	for _, c := range v.s.surfaceCards {
		if c.Surface == surface && c.MessageID == messageID {
			return c, nil
		}
	}
	return store.SurfaceCard{}, fmt.Errorf("%w: surface card", store.ErrNotFound)
}

// SurfacePosition implements store.Reader.
func (v view) SurfacePosition(_ context.Context, surface, name string) (store.SurfacePosition, error) {
	defer v.read()()
	p, ok := v.s.surfacePositions[surfacePlace{surface, name}]
	if !ok {
		return store.SurfacePosition{}, fmt.Errorf("%w: surface position", store.ErrNotFound)
	}
	return p, nil
}

// PutSurfaceCard implements store.Tx.
func (t *tx) PutSurfaceCard(_ context.Context, c store.SurfaceCard) error {
	for _, other := range t.s.surfaceCards {
		if other.Surface == c.Surface && other.MessageID == c.MessageID && other.ItemKey != c.ItemKey {
			return fmt.Errorf("store: %s message %q is the card of %s: %w", c.Surface, c.MessageID, other.ItemKey, store.ErrExists)
		}
	}
	c.UpdatedAt = stamp(c.UpdatedAt)
	put(t, t.s.surfaceCards, surfaceItem{c.Surface, c.ItemKey}, c)
	return nil
}

// PutSurfacePosition implements store.Tx.
func (t *tx) PutSurfacePosition(_ context.Context, p store.SurfacePosition) error {
	p.UpdatedAt = stamp(p.UpdatedAt)
	put(t, t.s.surfacePositions, surfacePlace{p.Surface, p.Name}, p)
	return nil
}
