package primary

import (
	"context"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/workerhub"
)

// shellRouter sends a response's commands to the primary host or to its worker, by worker key.
type shellRouter struct {
	local   *shellhost.Runner
	workers *workerhub.Hub
}

func (s shellRouter) Run(ctx context.Context, cmd response.ShellCommand, out bashexec.Output) (bashexec.Result, error) {
	if cmd.WorkerKey == "" {
		return s.local.Run(ctx, shellhost.Command{
			Response: cmd.ResponseID, Agent: cmd.Agent, Command: cmd.Command, Timeout: cmd.Timeout, AgentCLIEnv: cmd.AgentCLIEnv,
		}, out)
	}
	return s.workers.Run(ctx, cmd, out)
}

func (s shellRouter) AgentCLIURL(key string, b *response.Binding) (string, error) {
	if key == "" {
		return s.local.AgentCLIURL(), nil
	}
	return s.workers.AgentCLIURL(key, b)
}

func (s shellRouter) Release(key string, b *response.Binding, responseID string) {
	if key == "" {
		s.local.Release(responseID)
		return
	}
	s.workers.Release(b, responseID)
}
