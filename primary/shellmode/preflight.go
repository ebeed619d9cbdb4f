package shellmode

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/primary/catalog"
)

// Target is the agent and conversation whose shell the preflight checks.
type Target struct {
	Agent   string
	Channel string
	Thread  string
	// WorkerKey names the workers the agent's shells run on; empty for the primary's own shell.
	WorkerKey string
	// Toolkits is the response's toolkit selection (names or patterns); empty selects every
	// toolkit, as when an operator stores the mode for every response to come.
	Toolkits []string
}

// Problem is one failed check: what is wrong and how to fix it, in plain words.
type Problem struct {
	// Check names the check ("shell_toolkit", "workspace", "agent_cli_listener", "agent_cli_bin",
	// "worker").
	Check string
	// What is wrong.
	What string
	// Fix is what to do about it.
	Fix string
}

// String is the problem and its fix as one text for a person: "What. Fix: Fix."
func (p Problem) String() string { return p.What + ". Fix: " + p.Fix + "." }

// Explain lists every problem with its fix, numbered, in one text: "(1) What. Fix: Fix. (2) …".
func Explain(problems []Problem) string {
	var b strings.Builder
	for i, p := range problems {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "(%d) %s", i+1, p)
	}
	return b.String()
}

// LocalShell is the primary's own shell host (shellhost.Runner).
type LocalShell interface {
	// Workspace returns the agent's working directory, creating it if needed.
	Workspace(agent string) (string, error)
	// AgentCLIURL is the origin of the loopback Agent CLI listener the shells call.
	AgentCLIURL() string
	// BinDir is the agent_cli_bin/ directory holding mindroom-agent.
	BinDir() string
	// Probe runs a real command of the agent's, as its shells run, and says what failed; once
	// one passed, it runs again only when what it proved has changed.
	Probe(ctx context.Context, agent string) error
}

// Config is what a Preflight checks against. A nil dependency makes its checks fail with a
// problem saying the primary lacks it.
type Config struct {
	Registry *catalog.Registry
	Local    LocalShell
	Workers  Workers
	// ProbeTimeout bounds the request to the Agent CLI listener; zero means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// Clock times how long a listener that answered stays trusted; nil means clock.System.
	Clock clock.Clock
}

// DefaultProbeTimeout bounds the listener probe when Config.ProbeTimeout is zero.
const DefaultProbeTimeout = 3 * time.Second

// Preflight runs the checks of the minimal shell mode. It is safe for concurrent use.
type Preflight struct {
	cfg    Config
	client *http.Client
	// listenerAnswered is when the Agent CLI listener last answered a probe, in Unix
	// nanoseconds; zero before it first did.
	listenerAnswered atomic.Int64
}

// New returns a Preflight over cfg.
func New(cfg Config) *Preflight {
	if cfg.ProbeTimeout <= 0 {
		cfg.ProbeTimeout = DefaultProbeTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	return &Preflight{cfg: cfg, client: probeClient(cfg.ProbeTimeout)}
}

// Check runs every check for t and returns every problem found, in a fixed order; none means
// the minimal mode can be used. It blocks at most about the probe timeout.
func (p *Preflight) Check(ctx context.Context, t Target) []Problem {
	var out []Problem
	out = append(out, p.checkToolkit(ctx, t)...)
	if t.WorkerKey != "" {
		return append(out, p.checkWorkers(t.WorkerKey)...)
	}
	out = append(out, p.checkWorkspace(ctx, t.Agent)...)
	out = append(out, p.checkListener(ctx)...)
	return append(out, p.checkAgentBinary()...)
}
