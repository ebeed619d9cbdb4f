package shelltk

import (
	"context"

	"github.com/turncli/turncli/primary/catalog"
)

// check reports a background command. Reporting an exited command releases its handle.
func (t *Toolkit) check(call catalog.Call) (catalog.Result, error) {
	handle, err := parseHandle(call.Arguments)
	if err != nil {
		return catalog.Result{}, err
	}
	c, err := t.lookup(call.Identity.ResponseID, handle)
	if err != nil {
		return catalog.Result{}, err
	}
	v := c.report(handle)
	if v["status"] != "running" {
		t.release(call.Identity.ResponseID, handle, c)
	}
	return catalog.Result{Value: v}, nil
}

// kill stops a background command, waits for it to exit, releases its handle and reports its
// final status. If the call ends first, the command is still being stopped and a later check
// reports it.
func (t *Toolkit) kill(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	handle, err := parseHandle(call.Arguments)
	if err != nil {
		return catalog.Result{}, err
	}
	c, err := t.lookup(call.Identity.ResponseID, handle)
	if err != nil {
		return catalog.Result{}, err
	}
	if !c.exited() {
		c.kill()
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return catalog.Result{}, ctx.Err()
	}
	t.release(call.Identity.ResponseID, handle, c)
	return catalog.Result{Value: c.report(handle)}, nil
}
