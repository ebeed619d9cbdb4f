package shellmode

import (
	"fmt"

	"github.com/turncli/turncli/primary/workerhub"
)

// Workers is the primary's worker hub (workerhub.Hub).
type Workers interface {
	// Workers lists the connected workers.
	Workers() []workerhub.Identity
	// NextAgentCLIURL is the sandbox proxy origin of the worker a new response of key would go
	// to, without placing one.
	NextAgentCLIURL(key string) (string, error)
}

// checkWorkers: at least one worker of key is connected and its sandbox proxy is known.
func (p *Preflight) checkWorkers(key string) []Problem {
	if p.cfg.Workers == nil {
		return []Problem{{Check: "worker", What: "this primary accepts no workers",
			Fix: "run the primary with worker credentials, or leave the worker key empty to use the primary's own shell"}}
	}
	connected := 0
	for _, w := range p.cfg.Workers.Workers() {
		if w.Key == key {
			connected++
		}
	}
	if connected == 0 {
		return []Problem{{Check: "worker", What: fmt.Sprintf("no worker with key %q is connected", key),
			Fix: fmt.Sprintf("start a mindroom-worker with key %q and its worker credential, pointed at this primary", key)}}
	}
	url, err := p.cfg.Workers.NextAgentCLIURL(key)
	switch {
	case err != nil:
		return []Problem{{Check: "worker", What: fmt.Sprintf("no worker with key %q can take the agent's shell: %v", key, err),
			Fix: fmt.Sprintf("wait for a worker with key %q to finish work, or start another one", key)}}
	case url == "":
		return []Problem{{Check: "worker", What: fmt.Sprintf("the worker with key %q did not report its sandbox proxy address", key),
			Fix: "run the worker with its sandbox proxy enabled (the Agent CLI address it announces on connecting)"}}
	}
	return nil
}
