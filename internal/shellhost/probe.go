package shellhost

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/turncli/turncli/internal/bashexec"
)

// probeScript checks, from inside a real shell of the agent's, what its commands need: a
// writable workspace, and a mindroom-agent on PATH that runs.
const probeScript = `test -w . || { echo "its workspace $PWD is not writable by uid $(id -u)"; exit 1; }
command -v mindroom-agent >/dev/null || { echo "mindroom-agent is not on its PATH ($PATH)"; exit 1; }
mindroom-agent --version >/dev/null 2>&1 || { echo "$(command -v mindroom-agent) does not run as uid $(id -u): $(mindroom-agent --version 2>&1 | head -c 300)"; exit 1; }`

// probeTimeout bounds the probe command.
const probeTimeout = 10 * time.Second

// Probe runs a real command of the agent's, as its shells run (its user, its sandbox, its
// workspace, its PATH), and fails saying what a shell of the agent's could not do.
func (r *Runner) Probe(ctx context.Context, agent string) error {
	var out bytes.Buffer
	res, err := r.Run(ctx, Command{Agent: agent, Command: probeScript, Timeout: probeTimeout}, func(_ bashexec.Stream, b []byte) {
		if out.Len() < 4096 {
			out.Write(b)
		}
	})
	switch {
	case err != nil:
		return fmt.Errorf("a shell of agent %q could not start: %w", agent, err)
	case res.ExitCode != 0:
		return fmt.Errorf("a shell of agent %q started, but %s", agent, strings.TrimSpace(out.String()))
	}
	return nil
}
