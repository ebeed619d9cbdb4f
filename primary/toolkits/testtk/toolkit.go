package testtk

import (
	"context"
	"fmt"

	"github.com/turncli/turncli/primary/catalog"
)

// Name is the selector of the eager test toolkit.
const Name = "test"

// Toolkit is the eager "test" toolkit. It is safe for concurrent use.
type Toolkit struct {
	gates gates
}

var _ catalog.Toolkit = (*Toolkit)(nil)

// New returns the "test" toolkit with every gate closed.
func New() *Toolkit {
	return &Toolkit{}
}

// Name returns "test".
func (t *Toolkit) Name() string { return Name }

// Description is shown by discovery.
func (t *Toolkit) Description() string {
	return "Deterministic functions for tests and demos of the Agent CLI."
}

// Deferred reports false: the definition is static and cheap.
func (t *Toolkit) Deferred() bool { return false }

// Load returns the toolkit's instructions and functions.
func (t *Toolkit) Load(context.Context) (catalog.Definition, error) {
	return catalog.Definition{
		Instructions: []string{"Test toolkit: its functions exist to exercise the Agent CLI and do no real work."},
		Functions:    functions(),
	}, nil
}

// Call runs one function.
func (t *Toolkit) Call(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	switch call.Function {
	case "echo":
		return echo(call)
	case "sleep":
		return sleep(ctx, call)
	case "fail":
		return fail(call)
	case "large":
		return large(call)
	case "wait":
		return wait(ctx, call)
	case "gate":
		return t.gate(ctx, call)
	case "release":
		return t.release(call)
	case "media":
		return media()
	case "huge_schema":
		return catalog.Result{Value: map[string]any{"ok": true}}, nil
	case "identity":
		return identity(call)
	case "confirm_echo":
		return confirmEcho(call)
	}
	return catalog.Result{}, fmt.Errorf("unknown function %s.%s", Name, call.Function)
}
