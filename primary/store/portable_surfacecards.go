package store

import (
	"context"
	"errors"
	"fmt"
)

// SurfaceCard implements SurfaceCards.
func (p *Portable) SurfaceCard(ctx context.Context, surface, itemKey string) (SurfaceCard, error) {
	if err := checkSurfaceCard(SurfaceCard{Surface: surface, ItemKey: itemKey, Room: "-", MessageID: "-"}); err != nil {
		return SurfaceCard{}, err
	}
	c, err := p.d.SurfaceCard(ctx, surface, itemKey)
	if errors.Is(err, ErrNotFound) {
		return SurfaceCard{}, fmt.Errorf("%w: %s shows no card of %s", ErrNotFound, surface, itemKey)
	}
	return c, err
}

// SurfaceCardByMessage implements SurfaceCards.
func (p *Portable) SurfaceCardByMessage(ctx context.Context, surface, messageID string) (SurfaceCard, error) {
	if err := checkSurfaceCard(SurfaceCard{Surface: surface, ItemKey: "-", Room: "-", MessageID: messageID}); err != nil {
		return SurfaceCard{}, err
	}
	c, err := p.d.SurfaceCardByMessage(ctx, surface, messageID)
	if errors.Is(err, ErrNotFound) {
		return SurfaceCard{}, fmt.Errorf("%w: %s message %q is no card", ErrNotFound, surface, messageID)
	}
	return c, err
}

// SurfacePosition implements SurfaceCards.
func (p *Portable) SurfacePosition(ctx context.Context, surface, name string) (SurfacePosition, error) {
	if err := checkSurfacePosition(surface, name, ""); err != nil {
		return SurfacePosition{}, err
	}
	pos, err := p.d.SurfacePosition(ctx, surface, name)
	if errors.Is(err, ErrNotFound) {
		return SurfacePosition{}, fmt.Errorf("%w: %s has no %s position", ErrNotFound, surface, name)
	}
	return pos, err
}

// SaveSurfaceDelivery implements SurfaceCards; the time of each record is the store's clock.
func (p *Portable) SaveSurfaceDelivery(ctx context.Context, d SurfaceDelivery) error {
	for _, c := range d.Cards {
		if err := checkSurfaceCard(c); err != nil {
			return err
		}
	}
	for _, pos := range d.Positions {
		if err := checkSurfacePosition(pos.Surface, pos.Name, pos.Value); err != nil {
			return err
		}
	}
	at := p.clock()
	return p.update(ctx, func(tx Tx) error {
		for _, c := range d.Cards {
			c.UpdatedAt = at
			if err := tx.PutSurfaceCard(ctx, c); err != nil {
				return err
			}
		}
		for _, pos := range d.Positions {
			pos.UpdatedAt = at
			if err := tx.PutSurfacePosition(ctx, pos); err != nil {
				return err
			}
		}
		return nil
	})
}
