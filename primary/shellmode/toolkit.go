package shellmode

import (
	"context"
	"fmt"
	"strings"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/toolkits/shelltk"
)

// shellFunctions are the functions the minimal mode relies on: run a command, follow it and
// stop it.
var shellFunctions = []string{"run_shell_command", "check_shell_command", "kill_shell_command"}

// checkToolkit: the shell toolkit is registered and offers run, check and kill to the agent.
func (p *Preflight) checkToolkit(ctx context.Context, t Target) []Problem {
	if p.cfg.Registry == nil {
		return []Problem{{Check: "shell_toolkit", What: "this primary has no tool catalog",
			Fix: "run the primary with its built-in toolkits (a full mindroom-primary, not a partial build)"}}
	}
	if _, ok := p.cfg.Registry.Lookup(shelltk.Name); !ok {
		return []Problem{{Check: "shell_toolkit", What: fmt.Sprintf("the %q toolkit is not registered on this primary", shelltk.Name),
			Fix: "run a mindroom-primary that registers its built-in shell toolkit"}}
	}
	// The agent's view of the whole catalog in the minimal mode: a toolkit may offer some of
	// its functions only to some agents.
	view := p.cfg.Registry.Snapshot([]string{shelltk.Name}).For(catalog.Identity{
		Agent: t.Agent, Channel: t.Channel, Thread: t.Thread, WorkerKey: t.WorkerKey,
	})
	var missing []string
	for _, f := range shellFunctions {
		if _, err := view.Resolve(ctx, shelltk.Name, f); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []Problem{{Check: "shell_toolkit",
		What: fmt.Sprintf("the %q toolkit does not offer %s to agent %q", shelltk.Name, strings.Join(missing, ", "), t.Agent),
		Fix:  "allow the agent the shell toolkit's run_shell_command, check_shell_command and kill_shell_command"}}
}
