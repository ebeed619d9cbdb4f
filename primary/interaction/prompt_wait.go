package interaction

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/store"
)

// A waiting call learns of a decision from the live feed (DecidePrompt publishes it after
// the commit) and then reads the prompt from the store, which is the truth. The feed drops
// events for a subscriber that falls behind, so the call also looks at the store every
// promptRecheck: a decision it missed is still seen soon.
const (
	promptRecheck    = 2 * time.Second
	promptFeedBuffer = 64
	// promptCloseTimeout bounds closing a prompt after its call ended.
	promptCloseTimeout = 10 * time.Second
)

// Reasons a prompt ends without a decision (its feedback).
const (
	reasonUnposted  = "The request could not be posted for people to decide."
	reasonClosed    = "The response ended before anyone decided."
	reasonCancelled = "The call was cancelled before anyone decided."
	reasonLost      = "The primary lost track of the request, so it was closed."
)

// postAndWait saves p, marks the call waiting and waits until an operator decides, the bound
// (Settings.PromptWait) passes or the call ends. In the last two cases it expires the prompt first, so
// that it can never be decided later. It returns the prompt as it ended: decided, or expired
// with the reason as its feedback. A prompt that could not be saved comes back expired with
// ID 0.
func (s *Prompts) postAndWait(ctx context.Context, call catalog.Call, p store.NewPrompt) store.Prompt {
	unposted := store.Prompt{Kind: p.Kind, ToolName: p.ToolName, Status: store.PromptExpired, Feedback: reasonUnposted}
	ps := s.cfg.Store
	// Listen before posting, so that a decision made at once is not missed.
	feed, stop := s.cfg.Events.Subscribe(promptFeedBuffer)
	defer stop()
	if call.Progress != nil {
		call.Progress.Waiting()
		defer call.Progress.Running()
	}
	p.Deadline = s.cfg.Clock.Now().Add(s.cfg.Settings.PromptWait)
	posted, err := ps.CreatePrompt(ctx, p)
	if err != nil {
		s.log.Error("prompt not posted", "kind", p.Kind, "call", call.ID, "err", err)
		return unposted
	}
	s.publishPrompt("prompt.created", posted)
	s.log.Info("prompt posted", promptAttrs(posted)...)

	bound, expired := s.cfg.Clock.NewTimer(s.cfg.Settings.PromptWait)
	defer bound.Stop()
	recheck, rechecks := s.cfg.Clock.NewTicker(promptRecheck)
	defer recheck.Stop()
	lifetime := call.Lifetime
	if lifetime == nil {
		lifetime = context.Background()
	}
	subject := store.PromptSubject(posted.ID)
	for {
		select {
		case ev := <-feed:
			if ev.Kind != events.KindGap && ev.Subject != subject {
				continue
			}
		case <-rechecks:
		case <-expired:
			return s.closePrompt(ctx, posted, fmt.Sprintf("Nobody decided within %s.", plainDuration(s.cfg.Settings.PromptWait)))
		case <-lifetime.Done():
			return s.leave(ctx, posted, reasonClosed)
		case <-ctx.Done():
			if lifetime.Err() != nil {
				return s.leave(ctx, posted, reasonClosed)
			}
			return s.leave(ctx, posted, reasonCancelled)
		}
		now, err := ps.Prompt(ctx, posted.ID)
		switch {
		case ctx.Err() != nil:
			continue // the next select closes it
		case err != nil:
			s.log.Error("prompt unreadable", "prompt", posted.ID, "err", err)
			return s.closePrompt(ctx, posted, reasonLost)
		case now.Status != store.PromptPending:
			return now
		}
	}
}

// leave is closePrompt for a call that ends before its prompt's wait does, except that a
// prompt a parked job waits on stays open: the job's engine stopped on purpose, and the
// decision resumes it (see parking.go).
func (s *Prompts) leave(ctx context.Context, p store.Prompt, reason string) store.Prompt {
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), promptCloseTimeout)
	defer cancel()
	if now, err := s.cfg.Store.Prompt(readCtx, p.ID); err == nil && now.ParkedJob != 0 && now.Status == store.PromptPending {
		return now
	}
	return s.closePrompt(ctx, p, reason)
}

// closePrompt expires a prompt whose call stops waiting for it. When a decision won the race,
// the decision stands and is returned.
func (s *Prompts) closePrompt(ctx context.Context, p store.Prompt, reason string) store.Prompt {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), promptCloseTimeout)
	defer cancel()
	ended, err := s.cfg.Store.ExpirePrompt(ctx, p.ID, reason)
	if err == nil {
		s.publishPrompt("prompt.expired", ended)
		s.log.Info("prompt expired", "prompt", p.ID, "kind", p.Kind, "reason", reason)
		return ended
	}
	if errors.Is(err, store.ErrConflict) {
		if decided, rerr := s.cfg.Store.Prompt(ctx, p.ID); rerr == nil && decided.Status != store.PromptPending {
			return decided
		}
	}
	// Still pending in the store: nobody waits for it, and the next boot expires it.
	s.log.Error("prompt not closed", "prompt", p.ID, "err", err)
	p.Status, p.Feedback, p.Decision, p.DecidedBy = store.PromptExpired, reason, "", ""
	return p
}

// plainDuration says d as people do: "280 seconds", "1 second", "1.5s".
func plainDuration(d time.Duration) string {
	switch {
	case d == time.Second:
		return "1 second"
	case d > time.Second && d%time.Second == 0:
		return fmt.Sprintf("%d seconds", d/time.Second)
	default:
		return d.String()
	}
}
