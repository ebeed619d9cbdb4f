package drivertest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

func (cf conformance) testSurfaceCards(t *testing.T) {
	ctx := context.Background()
	card := store.SurfaceCard{Surface: "matrix", ItemKey: "approval/7", Room: "!room:example.org", Thread: "$root",
		MessageID: "$card1", Shown: 3}
	feed := store.SurfacePosition{Surface: "matrix", Name: "feed", Value: "3"}

	t.Run("ACardAndItsPositionSaveTogetherAndLast", func(t *testing.T) {
		h := cf.newHarness(t)
		clk := &clock{t: t0}
		s := cf.open(t, h, clk)
		if err := s.SaveSurfaceDelivery(ctx, store.SurfaceDelivery{Cards: []store.SurfaceCard{card}, Positions: []store.SurfacePosition{feed}}); err != nil {
			t.Fatal(err)
		}
		want := card
		want.UpdatedAt = t0
		for name, read := range map[string]func(store.Store) (store.SurfaceCard, error){
			"by item":    func(s store.Store) (store.SurfaceCard, error) { return s.SurfaceCard(ctx, "matrix", "approval/7") },
			"by message": func(s store.Store) (store.SurfaceCard, error) { return s.SurfaceCardByMessage(ctx, "matrix", "$card1") },
		} {
			if got, err := read(s); err != nil || got != want {
				t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
			}
		}
		if got, err := s.SurfacePosition(ctx, "matrix", "feed"); err != nil || got.Value != "3" || !got.UpdatedAt.Equal(t0) {
			t.Errorf("position %+v, %v; want 3 at %v", got, err, t0)
		}

		// Reopened (a restart), the surface resumes from what it saved.
		s2 := cf.open(t, h, clk)
		if got, err := s2.SurfaceCard(ctx, "matrix", "approval/7"); err != nil || got != want {
			t.Errorf("after reopening: %+v, %v; want %+v", got, err, want)
		}
	})

	t.Run("ACardSavedAgainReplacesItsMessage", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		moved := card
		moved.MessageID, moved.Shown = "$card2", 9
		for _, c := range []store.SurfaceCard{card, moved} {
			if err := s.SaveSurfaceDelivery(ctx, store.SurfaceDelivery{Cards: []store.SurfaceCard{c}}); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.SurfaceCard(ctx, "matrix", "approval/7"); err != nil || got.MessageID != "$card2" || got.Shown != 9 {
			t.Errorf("card %+v, %v; want message $card2 showing 9", got, err)
		}
		if _, err := s.SurfaceCardByMessage(ctx, "matrix", "$card1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the replaced message: %v, want ErrNotFound", err)
		}
	})

	t.Run("AMessageIsOneItemsCardAndARefusedDeliveryKeepsNothing", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		if err := s.SaveSurfaceDelivery(ctx, store.SurfaceDelivery{Cards: []store.SurfaceCard{card}}); err != nil {
			t.Fatal(err)
		}
		other := card
		other.ItemKey = "prompt/1"
		err := s.SaveSurfaceDelivery(ctx, store.SurfaceDelivery{Cards: []store.SurfaceCard{other}, Positions: []store.SurfacePosition{feed}})
		if !errors.Is(err, store.ErrExists) {
			t.Fatalf("a second item on the same message: %v, want ErrExists", err)
		}
		if _, err := s.SurfacePosition(ctx, "matrix", "feed"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the refused delivery's position: %v, want ErrNotFound", err)
		}
		// The same message id on another surface is another message.
		other.Surface = "slack"
		if err := s.SaveSurfaceDelivery(ctx, store.SurfaceDelivery{Cards: []store.SurfaceCard{other}}); err != nil {
			t.Errorf("the same id on another surface: %v", err)
		}
	})

	t.Run("NothingSavedIsNotFound", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		if _, err := s.SurfaceCard(ctx, "matrix", "approval/1"); !errors.Is(err, store.ErrNotFound) ||
			err.Error() != "not found: matrix shows no card of approval/1" {
			t.Errorf("card: %v", err)
		}
		if _, err := s.SurfaceCardByMessage(ctx, "matrix", "$x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("message: %v", err)
		}
		if _, err := s.SurfacePosition(ctx, "matrix", "sync"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("position: %v", err)
		}
	})

	t.Run("LimitsHoldAtTheirBounds", func(t *testing.T) {
		with := func(f func(c *store.SurfaceCard, p *store.SurfacePosition)) store.SurfaceDelivery {
			c, p := card, feed
			f(&c, &p)
			return store.SurfaceDelivery{Cards: []store.SurfaceCard{c}, Positions: []store.SurfacePosition{p}}
		}
		for _, tc := range []struct {
			name     string
			at, over func(c *store.SurfaceCard, p *store.SurfacePosition)
		}{
			{"item key", func(c *store.SurfaceCard, _ *store.SurfacePosition) {
				c.ItemKey = strings.Repeat("k", store.MaxSurfaceItemKey)
			},
				func(c *store.SurfaceCard, _ *store.SurfacePosition) {
					c.ItemKey = strings.Repeat("k", store.MaxSurfaceItemKey+1)
				}},
			{"message id", func(c *store.SurfaceCard, _ *store.SurfacePosition) {
				c.MessageID = strings.Repeat("m", store.MaxSurfaceMessageID)
			},
				func(c *store.SurfaceCard, _ *store.SurfacePosition) {
					c.MessageID = strings.Repeat("m", store.MaxSurfaceMessageID+1)
				}},
			{"room", func(c *store.SurfaceCard, _ *store.SurfacePosition) {
				c.Room = strings.Repeat("r", store.MaxSurfaceRoom)
			},
				func(c *store.SurfaceCard, _ *store.SurfacePosition) {
					c.Room = strings.Repeat("r", store.MaxSurfaceRoom+1)
				}},
			{"thread", func(c *store.SurfaceCard, _ *store.SurfacePosition) {
				c.Thread = strings.Repeat("t", store.MaxSurfaceThread)
			},
				func(c *store.SurfaceCard, _ *store.SurfacePosition) {
					c.Thread = strings.Repeat("t", store.MaxSurfaceThread+1)
				}},
			{"position name", func(_ *store.SurfaceCard, p *store.SurfacePosition) {
				p.Name = strings.Repeat("n", store.MaxPositionName)
			},
				func(_ *store.SurfaceCard, p *store.SurfacePosition) {
					p.Name = strings.Repeat("n", store.MaxPositionName+1)
				}},
			{"position", func(_ *store.SurfaceCard, p *store.SurfacePosition) {
				p.Value = strings.Repeat("v", store.MaxPositionValue)
			},
				func(_ *store.SurfaceCard, p *store.SurfacePosition) {
					p.Value = strings.Repeat("v", store.MaxPositionValue+1)
				}},
		} {
			s := cf.open(t, nil, nil)
			if err := s.SaveSurfaceDelivery(ctx, with(tc.at)); err != nil {
				t.Errorf("%s at its limit: %v", tc.name, err)
			}
			if err := s.SaveSurfaceDelivery(ctx, with(tc.over)); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s one over its limit: %v, want ErrInvalid", tc.name, err)
			}
		}
		for name, f := range map[string]func(c *store.SurfaceCard, p *store.SurfacePosition){
			"no surface":     func(c *store.SurfaceCard, _ *store.SurfacePosition) { c.Surface = "" },
			"a bad surface":  func(_ *store.SurfaceCard, p *store.SurfacePosition) { p.Surface = "Matrix!" },
			"no item":        func(c *store.SurfaceCard, _ *store.SurfacePosition) { c.ItemKey = "" },
			"no message":     func(c *store.SurfaceCard, _ *store.SurfacePosition) { c.MessageID = "" },
			"no room":        func(c *store.SurfaceCard, _ *store.SurfacePosition) { c.Room = "" },
			"a negative one": func(c *store.SurfaceCard, _ *store.SurfacePosition) { c.Shown = -1 },
		} {
			s := cf.open(t, nil, nil)
			if err := s.SaveSurfaceDelivery(ctx, with(f)); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
	})
}
