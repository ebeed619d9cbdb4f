package shellmode

import (
	"context"
	"fmt"
)

// checkWorkspace: the agent's workspace on the primary exists or can be created, and a real
// command of the agent's starts in it, as its shells start, writes there and runs
// mindroom-agent.
func (p *Preflight) checkWorkspace(ctx context.Context, agent string) []Problem {
	if p.cfg.Local == nil {
		return []Problem{{Check: "workspace", What: "this primary runs no local shells",
			Fix: "name the worker key the agent's shells run on, or run the primary with local shells"}}
	}
	dir, err := p.cfg.Local.Workspace(agent)
	if err != nil {
		return []Problem{{Check: "workspace", What: fmt.Sprintf("the workspace of agent %q cannot be created: %v", agent, err),
			Fix: "make the primary's state directory writable by the primary and remove whatever is in the way of workspaces/" + agent}}
	}
	if err := p.cfg.Local.Probe(ctx, agent); err != nil {
		return []Problem{{Check: "workspace", What: fmt.Sprintf("%v (in %s)", err, dir),
			Fix: "run the primary as root, so each agent's shells run in a sandbox of their own that reaches the workspace and mindroom-agent wherever the state directory is; " +
				"without root, every directory from / down to " + dir + " and to the --agent-binary must be passable by the shells' user"}}
	}
	return nil
}
