package shelltk

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/turncli/turncli/primary/catalog"
)

// Name is the toolkit's selector.
const Name = "shell"

// DefaultMaxBackground is how many background commands may run at once per response when
// Options.MaxBackground is not set.
const DefaultMaxBackground = 16

// Options configures the toolkit. The zero value is ready for production.
type Options struct {
	// NewHandle returns a fresh, unguessable handle for a background command; nil means
	// uuid.NewString.
	NewHandle func() string
	// MaxBackground bounds the live background commands of one response; zero or negative
	// means DefaultMaxBackground.
	MaxBackground int
}

// Toolkit is the "shell" toolkit. It is safe for concurrent use.
type Toolkit struct {
	newHandle     func() string
	maxBackground int

	mu sync.Mutex
	// responses holds the background commands of each response with at least one, by
	// Identity.ResponseID.
	responses map[string]*responseCommands
}

var _ catalog.Toolkit = (*Toolkit)(nil)

// New returns the shell toolkit.
func New(opts Options) *Toolkit {
	t := &Toolkit{
		newHandle:     opts.NewHandle,
		maxBackground: opts.MaxBackground,
		responses:     make(map[string]*responseCommands),
	}
	if t.newHandle == nil {
		t.newHandle = uuid.NewString
	}
	if t.maxBackground <= 0 {
		t.maxBackground = DefaultMaxBackground
	}
	return t
}

// Name returns "shell".
func (t *Toolkit) Name() string { return Name }

// Description is shown by discovery.
func (t *Toolkit) Description() string {
	return "Run nested Bash commands in the calling command's window, in the foreground or the background."
}

// Deferred reports false: the definition is static and cheap.
func (t *Toolkit) Deferred() bool { return false }

// Load returns the toolkit's instructions and functions.
func (t *Toolkit) Load(context.Context) (catalog.Definition, error) {
	return definition(), nil
}

// Call runs one function.
func (t *Toolkit) Call(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	switch call.Function {
	case "run_shell_command":
		return t.run(ctx, call)
	case "check_shell_command":
		return t.check(call)
	case "kill_shell_command":
		return t.kill(ctx, call)
	}
	return catalog.Result{}, fmt.Errorf("unknown function %s.%s", Name, call.Function)
}
