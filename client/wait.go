package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const (
	// MaxLongPoll is the longest wait asked of the server in one GET (it allows up to 60 s).
	MaxLongPoll = 25 * time.Second
	// defaultPollInterval paces plain GETs when the server does not long-poll.
	defaultPollInterval = 200 * time.Millisecond
	// fastAnswersBeforeFallback non-terminal answers in a row, each far earlier than the
	// asked wait, show that the server ignores ?wait.
	fastAnswersBeforeFallback = 2
)

// settle prints a receipt once it is terminal or the deadline has passed. A zero timeout
// prints first at once. It never cancels the call and never sends anything but GETs.
func (a *app) settle(ctx context.Context, tr *transport, callID string, first *reply, deadline time.Time, timeout time.Duration) (*result, error) {
	status, err := receiptStatus(first)
	if err != nil {
		return nil, err
	}
	if isTerminal(status) || timeout == 0 {
		return receiptResult(first)
	}
	last, err := a.waitFor(ctx, tr, callID, first, deadline)
	if err != nil {
		var e *cliError
		if errors.As(err, &e) && e.status == http.StatusUnauthorized {
			return nil, err // the response has ended: its receipts are gone
		}
		res, rerr := receiptResult(last)
		if rerr != nil {
			return nil, rerr
		}
		res.code = ExitPending
		res.note = fmt.Sprintf("%v; printed the last receipt, the call may still finish: mindroom-agent calls wait %s", err, callID)
		return res, nil
	}
	return receiptResult(last)
}

// waitFor reads the receipt of callID until it is terminal or the deadline passes, and
// returns the newest receipt it has; on error it returns the last good receipt with it.
//
// It long-polls (GET ?wait=S, S at most 25 s) and falls back to plain GETs every
// pollInterval when the server does not support it: the server rejects the query (400/422),
// or answers a non-terminal receipt far earlier than asked twice in a row.
//
// Interrupts (SIGINT, SIGTERM) end the wait gracefully, printing the last receipt, from the
// second request on. The first request runs without a handler: most calls settle in it, and
// installing one makes the runtime start its signal thread, a cost every fast call would pay.
func (a *app) waitFor(ctx context.Context, tr *transport, callID string, last *reply, deadline time.Time) (*reply, error) {
	longPoll := true
	fastAnswers := 0
	for requests := 0; ; requests++ {
		status, _ := receiptStatus(last)
		if isTerminal(status) {
			return last, nil
		}
		remaining := time.Until(deadline).Truncate(time.Millisecond)
		if remaining <= 0 {
			return last, nil
		}
		if requests == 1 { // a second request is needed: make the wait interruptible now
			var stop context.CancelFunc
			ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
		}
		var wait time.Duration
		if longPoll {
			wait = min(remaining, MaxLongPoll)
		} else if err := pause(ctx, min(a.pollInterval, remaining)); err != nil {
			return last, err
		}
		sent := time.Now()
		r, err := tr.get(ctx, callID, wait)
		if err != nil {
			if longPoll && rejectsQuery(err) {
				longPoll = false
				continue
			}
			return last, err
		}
		status, err = receiptStatus(r)
		if err != nil {
			return last, err
		}
		last = r
		if !longPoll || isTerminal(status) {
			continue
		}
		if time.Since(sent) >= wait/2 {
			fastAnswers = 0
			continue
		}
		if fastAnswers++; fastAnswers >= fastAnswersBeforeFallback {
			longPoll = false
		} else if err := pause(ctx, min(a.pollInterval, time.Until(deadline))); err != nil {
			return last, err
		}
	}
}

// rejectsQuery reports whether err is the server refusing the ?wait query.
func rejectsQuery(err error) bool {
	var e *cliError
	return errors.As(err, &e) && (e.status == http.StatusBadRequest || e.status == http.StatusUnprocessableEntity)
}

// pause waits for d unless ctx ends first.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return unavailablef("waiting was interrupted")
	case <-t.C:
		return nil
	}
}
