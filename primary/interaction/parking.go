package interaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/turncli/turncli/client/engines"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// A driver engine's permission hook asks interaction.permission_prompt and waits a while
// (engines.HookWaitEnv); when nobody has decided by then, the engine stops with the tool use
// pending and the job parks (jobs.Parker): no process, its prompt kept open (it names the job,
// so neither the end of its call nor a restart closes it). When people decide, or the
// prompt's wait passes, the job resumes: a fresh background response of the same agent,
// conversation and author, and the engine's session resumed with the decision
// (engines.ResumeEnv, engines.DecisionEnv).

// parkRecheck is how often parked jobs are looked at when no prompt event says to: a
// decision made while no primary ran, or an event missed, is still seen soon.
const parkRecheck = 2 * time.Second

// parker parks a job of response responseID on the permission prompt its engine's run waits
// on.
func (s *Background) parker(responseID string, toolkits []string, home string) jobs.Parker {
	return func(ctx context.Context, job store.Job, r engines.Result) error {
		if r.Session == "" || r.Parked == nil || r.Parked.CallID == "" {
			return errors.New("the engine's result names no session or call to resume")
		}
		pr, err := s.promptOf(ctx, job, responseID, r.Parked.CallID)
		if err != nil {
			return err
		}
		if pr.ToolUseID != r.Parked.ToolUseID {
			return fmt.Errorf("prompt %d asks about tool use %q, not %q", pr.ID, pr.ToolUseID, r.Parked.ToolUseID)
		}
		run := store.EngineRun{}
		if job.Run != nil {
			run = *job.Run
		}
		return s.cfg.Store.ParkJob(ctx, job.ID, store.Parking{
			Session: r.Session, PromptID: pr.ID, ToolUseID: pr.ToolUseID, Tool: pr.ToolName, Home: home, Toolkits: toolkits,
		}, run)
	}
}

// promptOf is the permission prompt of call callID of response responseID, in the job's
// conversation: only the job's own response's prompt can park it. It is usually pending, but
// may have been decided since the engine stopped; the newest prompts come first.
func (s *Background) promptOf(ctx context.Context, job store.Job, responseID, callID string) (store.Prompt, error) {
	prompts, err := s.cfg.Store.ListPrompts(ctx, store.PromptFilter{
		Kind: store.PromptPermission, Channel: job.Channel, Thread: job.Thread, Limit: 1000,
	})
	if err != nil {
		return store.Prompt{}, err
	}
	for _, pr := range prompts {
		if pr.ResponseID == responseID && pr.CallID == callID {
			return pr, nil
		}
	}
	return store.Prompt{}, fmt.Errorf("no permission prompt of call %s in the job's response", callID)
}

// RunParking resumes parked jobs as their prompts are decided or expire, until ctx ends.
func (s *Background) RunParking(ctx context.Context) {
	feed, stop := s.cfg.Events.Subscribe(promptFeedBuffer)
	defer stop()
	recheck, rechecks := s.cfg.Clock.NewTicker(parkRecheck)
	defer recheck.Stop()
	for {
		s.resumeParked(ctx)
		select {
		case <-ctx.Done():
			return
		case <-feed:
		case <-rechecks:
		}
	}
}

// resumeParked resumes every parked job whose prompt is no longer pending, expiring first the
// prompts whose wait has passed.
func (s *Background) resumeParked(ctx context.Context) {
	running, err := s.cfg.Store.ListJobs(ctx, store.JobRunning)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("parked jobs unreadable", "err", err)
		}
		return
	}
	for _, j := range running {
		if !j.Parked() || ctx.Err() != nil {
			continue
		}
		pr, err := s.cfg.Store.Prompt(ctx, j.Parking.PromptID)
		if err != nil {
			s.log.Error("parked job's prompt unreadable", "job", j.ID, "prompt", j.Parking.PromptID, "err", err)
			continue
		}
		if pr.Status == store.PromptPending {
			if s.cfg.Clock.Now().Before(pr.Deadline) {
				continue
			}
			pr = (&Prompts{s.family}).closePrompt(ctx, pr, fmt.Sprintf("Nobody decided within %s.", plainDuration(s.cfg.Settings.PromptWait)))
			if pr.Status == store.PromptPending {
				continue
			}
		}
		s.resume(ctx, j, decisionOf(pr, *j.Parking))
	}
}

// decisionOf is what the engine of a parked job is told of its prompt's end.
func decisionOf(pr store.Prompt, p store.Parking) engines.Decision {
	d := engines.Decision{ToolUseID: p.ToolUseID, Behavior: "deny"}
	switch {
	case pr.Status == store.PromptApproved:
		d.Behavior = "allow"
	case pr.Status == store.PromptExpired:
		d.Message = fmt.Sprintf("Permission to use %s was not granted: %s", p.Tool, lowerFirst(pr.Feedback))
	case pr.Feedback != "":
		d.Message = pr.Feedback
	default:
		d.Message = fmt.Sprintf("%s denied permission to use %s.", pr.DecidedBy, p.Tool)
	}
	return d
}

// resume takes the parking off job and starts its next run, told the decision. Whoever
// unparks it first resumes it; a run that cannot be set up ends the job saying why.
func (s *Background) resume(ctx context.Context, job store.Job, d engines.Decision) {
	if ctx.Err() != nil { // stopping: the next primary resumes it
		return
	}
	parked, err := s.cfg.Store.UnparkJob(ctx, job.ID)
	if err != nil {
		if !errors.Is(err, store.ErrConflict) {
			s.log.Error("parked job not resumed", "job", job.ID, "err", err)
		}
		return
	}
	p := parked.Parking
	giveUp := func(why string, err error) {
		s.log.Warn("parked job could not resume", "job", job.ID, "why", why, "err", err)
		s.cfg.Jobs.GiveUp(ctx, parked, why)
	}
	r, err := s.cfg.Responses.Open(response.Spec{
		Agent: parked.Agent, Requester: parked.Author, Channel: parked.Channel, Thread: parked.Thread,
		ShellMode: response.ShellModeMinimal, Origin: response.OriginBackground, Toolkits: p.Toolkits,
	}, response.ForBackgroundJob(s.cfg.Jobs.AgentLifetime()))
	if err != nil {
		giveUp("its response could not be opened again", err)
		return
	}
	decision, err := json.Marshal(d)
	if err != nil {
		r.Close()
		giveUp("the decision could not be encoded", err)
		return
	}
	spec, err := s.agentJob(r, map[string]string{engines.ResumeEnv: p.Session, engines.DecisionEnv: string(decision)}, p.Home)
	if err == nil {
		err = s.cfg.Jobs.Resume(ctx, parked, spec)
	}
	if err != nil {
		r.Close()
		giveUp("its next run could not be set up", err)
	}
}
