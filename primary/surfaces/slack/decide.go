package slack

import "context"

// Run hands queued Answers to Decide one at a time, in the order they came, and shows each
// reply or refusal to the person who answered. It returns when ctx ends; Answers still queued
// then are dropped (their cards stay open, and the person can answer again).
func (h *Handler) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case a := <-h.queue:
			h.decide(ctx, a)
		}
	}
}

func (h *Handler) decide(ctx context.Context, a Answer) {
	reply, err := h.cfg.Decide(ctx, a)
	if err != nil {
		reply = err.Error()
		h.log.Info("slack answer refused", "item", a.ItemKey, "user", a.UserID, "decision", string(a.Decision))
	}
	if reply != "" {
		h.notify(ctx, a, reply)
	}
}
