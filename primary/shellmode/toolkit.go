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
	if !SelectsShell(t.Toolkits) {
		return []Problem{{Check: "shell_toolkit",
			What: fmt.Sprintf("the response's toolkit selection (%s) leaves out the %q toolkit, so its shell would have no shell functions",
				strings.Join(quoted(t.Toolkits), ", "), shelltk.Name),
			Fix: fmt.Sprintf("add %q to the response's toolkits, or open it in the standard shell mode", shelltk.Name)}}
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

// SelectsShell reports whether a response's toolkit selection takes the shell toolkit, which
// the minimal mode relies on (an empty selection takes every toolkit).
func SelectsShell(toolkits []string) bool { return catalog.Selects(toolkits, shelltk.Name) }

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
