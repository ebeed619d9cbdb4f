package shelltk

import (
	"context"
	"errors"
	"time"

	"github.com/turncli/turncli/primary/catalog"
)

// run starts a nested command and waits for the first of: its exit (an exited result),
// wait_seconds (a handle; the command continues under the response's Lifetime) or the end of
// the call (the command is killed and awaited).
func (t *Toolkit) run(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	args, err := parseRun(call.Arguments)
	if err != nil {
		return catalog.Result{}, err
	}
	if call.Shell == nil || call.Lifetime == nil {
		return catalog.Result{}, errors.New("Shell commands are unavailable for this call")
	}
	responseID := call.Identity.ResponseID
	if err := t.roomFor(responseID); err != nil {
		return catalog.Result{}, err
	}

	c := start(call.Lifetime, call.Shell, args.command, args.timeout)
	timer := time.NewTimer(args.wait)
	defer timer.Stop()
	select {
	case <-c.done:
		return finished(c)
	case <-ctx.Done():
		c.kill()
		<-c.done
		return catalog.Result{}, ctx.Err()
	case <-timer.C:
	}
	if c.exited() {
		return finished(c)
	}
	handle, err := t.adopt(responseID, call.Lifetime, c)
	if err != nil {
		c.kill()
		<-c.done
		return catalog.Result{}, err
	}
	return catalog.Result{Value: c.report(handle)}, nil
}

// finished is the result of a command that exited while its call waited. A command that did not
// start fails the call.
func finished(c *command) (catalog.Result, error) {
	if err := c.startError(); err != nil {
		return catalog.Result{}, err
	}
	return catalog.Result{Value: c.report("")}, nil
}
