package store

import (
	"context"
	"time"
)

// SaveProgress implements Progress.
func (p *Portable) SaveProgress(ctx context.Context, s ProgressSnapshot) error {
	switch {
	case s.ResponseID == "":
		return invalid("a progress snapshot needs a response id")
	case s.Channel == "":
		return invalid("a progress snapshot needs a channel")
	case s.Title == "":
		return invalid("a progress snapshot needs a title")
	}
	steps, err := compactJSON("progress steps", s.Steps, '[')
	if err != nil {
		return err
	}
	if string(steps) == "[]" {
		return invalid("a progress snapshot needs at least one step")
	}
	s.Steps = steps
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = p.clock()
	} else {
		s.UpdatedAt = time.Unix(0, s.UpdatedAt.UnixNano()).UTC()
	}
	return p.update(ctx, func(tx Tx) error {
		if err := tx.PutProgress(ctx, s); err != nil {
			return err
		}
		tx.QueueThreadEvent(ctx, NewThreadEvent{Kind: ThreadProgress, Key: s.ResponseID, Change: ThreadUpdated}, s.UpdatedAt)
		return nil
	})
}

// ListProgress implements Progress.
func (p *Portable) ListProgress(ctx context.Context, f ProgressFilter) ([]ProgressSnapshot, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if err := checkTimePosition(f.After.UpdatedAt, f.After.ResponseID); err != nil {
		return nil, err
	}
	return p.d.ListProgress(ctx, f)
}
