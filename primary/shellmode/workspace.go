package shellmode

import (
	"fmt"
	"os"
)

// checkWorkspace: the agent's workspace on the primary exists or can be created, and a file can
// be written in it.
func (p *Preflight) checkWorkspace(agent string) []Problem {
	if p.cfg.Local == nil {
		return []Problem{{Check: "workspace", What: "this primary runs no local shells",
			Fix: "name the worker key the agent's shells run on, or run the primary with local shells"}}
	}
	dir, err := p.cfg.Local.Workspace(agent)
	if err != nil {
		return []Problem{{Check: "workspace", What: fmt.Sprintf("the workspace of agent %q cannot be created: %v", agent, err),
			Fix: "make the primary's state directory writable by the primary and remove whatever is in the way of workspaces/" + agent}}
	}
	f, err := os.CreateTemp(dir, ".preflight-*")
	if err != nil {
		return []Problem{{Check: "workspace", What: fmt.Sprintf("the workspace %s is not writable: %v", dir, err),
			Fix: "give the primary's user write permission on " + dir}}
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}
