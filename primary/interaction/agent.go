package interaction

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/turncli/turncli/client/engines"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
)

// agentWindow is the Bash call id of a background agent's one command in its response.
const agentWindow = "background-agent"

// runAgentInBackground starts the engine as a job of a fresh response of the same agent,
// conversation and author, with origin background: its tool calls go through that response's
// grant and window and meet the conversation's gates. The response closes when the job ends.
func (s *Background) runAgentInBackground(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	task, err := taskArg(call.Arguments)
	if err != nil {
		return catalog.Result{}, err
	}
	lbl, err := label(call.Arguments)
	if err != nil {
		return catalog.Result{}, err
	}
	if s.engine.Command == "" {
		return catalog.Result{}, errors.New("no background agent engine is configured on this primary; an administrator can set one with --agent-engine")
	}
	id := call.Identity
	parent, ok := s.cfg.Responses.Get(id.ResponseID)
	if !ok {
		return catalog.Result{}, errors.New("the calling response has closed")
	}
	if err := s.cfg.Jobs.CheckCaps(ctx, id.Channel, id.Thread); err != nil {
		return catalog.Result{}, s.jobError(err)
	}
	ps := parent.Spec()
	if err := s.checkAgentShell(ctx, ps); err != nil {
		return catalog.Result{}, err
	}
	// The agent's engine reaches its tools through `mindroom-agent mcp`: they are its native
	// tools, so its response offers the native catalog (every function, as minimal does), or a
	// standard turn's agent could not ask for permission or approval.
	r, err := s.cfg.Responses.Open(response.Spec{
		Agent: ps.Agent, Requester: ps.Requester, Channel: ps.Channel, Thread: ps.Thread, ShellMode: response.ShellModeMinimal,
		WorkerKey: ps.WorkerKey, Origin: response.OriginBackground, Toolkits: ps.Toolkits,
	}, response.ForBackgroundJob(s.cfg.Jobs.AgentLifetime()))
	if err != nil {
		return catalog.Result{}, err
	}
	jobID, err := s.startAgent(ctx, r, task, lbl)
	if err != nil {
		r.Close()
		return catalog.Result{}, err
	}
	return catalog.Result{Value: map[string]any{"status": "started", "job_id": jobID, "message": fmt.Sprintf(
		"Started background agent job %d; its report is posted to this conversation when it ends. %s", jobID, endTurn)}}, nil
}

// ShellPreflight checks an agent's shell for the minimal shell mode (shellmode.Preflight).
type ShellPreflight interface {
	Check(ctx context.Context, t shellmode.Target) []shellmode.Problem
}

// checkAgentShell runs the minimal mode's preflight for the agent's placement and toolkits
// before the agent starts: its response is minimal whatever the parent's mode, so the same
// check a runtime's minimal response and an operator's stored mode pass must pass here, or
// the agent would start in a shell that cannot serve it. A refusal lists every problem with
// its fix.
func (s *Background) checkAgentShell(ctx context.Context, ps response.Spec) error {
	problems := s.cfg.Preflight.Check(ctx, shellmode.Target{
		Agent: ps.Agent, Channel: ps.Channel, Thread: ps.Thread, WorkerKey: ps.WorkerKey, Toolkits: ps.Toolkits,
	})
	if len(problems) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s.log.Info("background agent refused by the preflight", "agent", ps.Agent, "channel", ps.Channel, "thread", ps.Thread,
		"worker_key", ps.WorkerKey, "problems", len(problems))
	return shellmode.Refusal(ps.Agent, "no background agent was started", problems)
}

func (s *Background) startAgent(ctx context.Context, r *response.Response, task, lbl string) (int64, error) {
	sp := r.Spec()
	home := ""
	if s.engine.Driver && sp.WorkerKey == "" {
		dir, err := s.cfg.Shells.Workspace(sp.Agent)
		if err != nil {
			return 0, err
		}
		home = filepath.Join(dir, engineHomes, uuid.NewString())
	}
	spec, err := s.agentJob(r, map[string]string{TaskEnv: brief(task)}, home)
	if err != nil {
		return 0, err
	}
	spec.Kind, spec.Command, spec.Label = "agent", s.engine.Command, lbl
	spec.Channel, spec.Thread, spec.Author, spec.Agent = sp.Channel, sp.Thread, sp.Requester, sp.Agent
	spec.WorkerKey, spec.Binding = sp.WorkerKey, r.Binding()
	jobID, err := s.cfg.Jobs.Start(ctx, spec)
	if err != nil {
		return 0, s.jobError(err)
	}
	return jobID, nil
}

// engineHomes is where, in an agent's workspace, each driver engine job of the agent keeps
// its engine's own configuration and sessions (engines.HomeEnv): a directory per job, so no
// job reads another's, nor the host's.
const engineHomes = ".mindroom-engines"

// agentJob is the environment, secrets and hooks of one run of an agent job in response r:
// the Agent CLI of its one Bash window, extra (the brief, or what a resumed run is told), and
// for a driver engine its home, caps and the variables AgentEnv names.
func (s *Background) agentJob(r *response.Response, extra map[string]string, home string) (jobs.JobSpec, error) {
	w, err := r.OpenWindow(agentWindow)
	if err != nil {
		return jobs.JobSpec{}, err
	}
	cliEnv, err := r.AgentCLIEnv(w)
	if err != nil {
		return jobs.JobSpec{}, err
	}
	sp := r.Spec()
	spec := jobs.JobSpec{
		Secrets: []string{cliEnv["MINDROOM_AGENT_CLI_TOKEN"]}, // live anyway; named for clarity
		OnEnd:   r.Close,
	}
	engineEnv := map[string]string{}
	if s.engine.Driver {
		spec.Engine = s.engine.Name
		// Their values are redacted from every job's output (Settings.AgentEnvValues).
		maps.Copy(engineEnv, s.cfg.Settings.agentEnv(os.Getenv))
		if n := s.cfg.Settings.AgentMaxTurns; n > 0 {
			engineEnv[engines.MaxTurnsEnv] = strconv.Itoa(n)
		}
		if usd := s.cfg.Settings.AgentMaxBudgetUSD; usd > 0 {
			engineEnv[engines.MaxBudgetEnv] = strconv.FormatFloat(usd, 'f', -1, 64)
		}
		if home != "" {
			engineEnv[engines.HomeEnv] = home
			spec.Park = s.parker(r.ID(), sp.Toolkits, home)
		} else {
			// A run on a worker cannot be resumed here, so its permission hook waits as long
			// as the prompt does and never parks.
			engineEnv[engines.HookWaitEnv] = (s.cfg.Settings.PromptWait + hookWaitMargin).String()
		}
	}
	maps.Copy(engineEnv, extra)
	if sp.WorkerKey == "" {
		dir, err := s.cfg.Shells.Workspace(sp.Agent)
		if err != nil {
			return jobs.JobSpec{}, err
		}
		env := maps.Clone(engineEnv)
		maps.Copy(env, cliEnv) // the grant and window are the response's, whatever AgentEnv says
		spec.Workspace, spec.Env = dir, s.cfg.Shells.Environment(env, dir)
		return spec, nil
	}
	// The worker gets the grant and window only: it sets the URL of its own proxy.
	spec.AgentCLIEnv = map[string]string{
		"MINDROOM_AGENT_CLI_TOKEN":  cliEnv["MINDROOM_AGENT_CLI_TOKEN"],
		"MINDROOM_AGENT_CLI_WINDOW": cliEnv["MINDROOM_AGENT_CLI_WINDOW"],
	}
	spec.ExtraEnv = engineEnv
	return spec, nil
}

// hookWaitMargin: a worker engine's permission hook outwaits the prompt's own bound by this
// much, so it always gets the prompt's answer (an expiry is a denial), never a timeout.
const hookWaitMargin = 30 * time.Second

// identityOf is on whose behalf an approved command runs: its requester, in its conversation.
func identityOf(ap store.Approval) catalog.Identity {
	return catalog.Identity{Agent: ap.Agent, Requester: ap.Author, Channel: ap.Channel, Thread: ap.Thread, WorkerKey: ap.WorkerKey}
}
