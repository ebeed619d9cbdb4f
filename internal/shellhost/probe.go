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
//
// A probe that passed is not run again for the agent while what it proved still stands: the
// same workspace, agent_cli_bin/ launcher and client binary, and the directories above them,
// with the same owners and modes and, for files, the same content (probeStamps). Every response
// opened in the minimal mode asks, and a probe costs a sandbox, a shell and a client process;
// an unchanged shell answers with a few stats. What a probe cannot keep proving (free disk) is
// checked each time.
func (r *Runner) Probe(ctx context.Context, agent string) error {
	couldNotStart := func(err error) error { return fmt.Errorf("a shell of agent %q could not start: %w", agent, err) }
	if err := r.launcher.ensure(); err != nil {
		return couldNotStart(err)
	}
	if err := r.CheckDisk(); err != nil {
		return couldNotStart(err)
	}
	dir, err := r.Workspace(agent)
	if err != nil {
		return couldNotStart(err)
	}
	// Taken before the probe runs: a change while it runs makes the next preflight probe again.
	stamps := r.probeStamps(dir)
	if r.probed.stands(agent, stamps) {
		return nil
	}
	var out bytes.Buffer
	res, err := r.Run(ctx, Command{Agent: agent, Command: probeScript, Timeout: probeTimeout}, func(_ bashexec.Stream, b []byte) {
		if out.Len() < 4096 {
			out.Write(b)
		}
	})
	switch {
	case err != nil:
		r.probed.forget(agent)
		return couldNotStart(err)
	case res.ExitCode != 0:
		r.probed.forget(agent)
		return fmt.Errorf("a shell of agent %q started, but %s", agent, strings.TrimSpace(out.String()))
	}
	r.probed.remember(agent, stamps)
	return nil
}
