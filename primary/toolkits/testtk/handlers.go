package testtk

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/turncli/turncli/primary/catalog"
)

// maxLarge bounds large's output, as its schema does.
const maxLarge = 1 << 20

// echo returns the arguments object unchanged ({} when there are none).
func echo(call catalog.Call) (catalog.Result, error) {
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	return catalog.Result{Value: args}, nil
}

// sleep sleeps and reports the seconds argument as it was given.
func sleep(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	d, err := seconds(call.Arguments, "seconds")
	if err != nil {
		return catalog.Result{}, err
	}
	if err := pause(ctx, d); err != nil {
		return catalog.Result{}, err
	}
	return catalog.Result{Value: map[string]any{"slept": call.Arguments["seconds"]}}, nil
}

// fail fails with the given message.
func fail(call catalog.Call) (catalog.Result, error) {
	msg, ok, err := text(call.Arguments, "message")
	if err != nil {
		return catalog.Result{}, err
	}
	if !ok {
		msg = "test failure"
	}
	return catalog.Result{}, errors.New(msg)
}

// large returns strings.Repeat("x", bytes).
func large(call catalog.Call) (catalog.Result, error) {
	n, err := integer(call.Arguments, "bytes")
	if err != nil {
		return catalog.Result{}, err
	}
	if n < 0 || n > maxLarge {
		return catalog.Result{}, errors.New(`argument "bytes" must be between 0 and 1048576`)
	}
	return catalog.Result{Value: strings.Repeat("x", int(n))}, nil
}

// wait reports waiting, waits, reports running and returns the seconds argument as given.
func wait(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	d, err := seconds(call.Arguments, "seconds")
	if err != nil {
		return catalog.Result{}, err
	}
	if call.Progress != nil {
		call.Progress.Waiting()
	}
	if err := pause(ctx, d); err != nil {
		return catalog.Result{}, err
	}
	if call.Progress != nil {
		call.Progress.Running()
	}
	return catalog.Result{Value: map[string]any{"waited": call.Arguments["seconds"]}}, nil
}

// identity returns who the call runs for, from the call's identity and never its arguments.
func identity(call catalog.Call) (catalog.Result, error) {
	id := call.Identity
	return catalog.Result{Value: map[string]any{
		"agent":        id.Agent,
		"requester":    id.Requester,
		"response_id":  id.ResponseID,
		"bash_call_id": call.BashCallID,
		"channel":      id.Channel,
		"thread":       id.Thread,
	}}, nil
}

// confirmEcho returns the arguments unchanged after appending a line to the marker file, if
// one is named, so a test can count how often the call really ran.
func confirmEcho(call catalog.Call) (catalog.Result, error) {
	marker, ok, err := text(call.Arguments, "marker")
	if err != nil {
		return catalog.Result{}, err
	}
	if ok {
		f, err := os.OpenFile(marker, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return catalog.Result{}, errors.New("cannot open the marker file")
		}
		_, werr := f.WriteString("run " + call.ID + "\n")
		if err := errors.Join(werr, f.Close()); err != nil {
			return catalog.Result{}, errors.New("cannot write the marker file")
		}
	}
	return echo(call)
}

// pause waits for d or until ctx ends, whichever is first; it returns ctx.Err() in the latter
// case.
func pause(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
