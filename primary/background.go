package primary

import (
	"context"
	"fmt"

	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
)

// newJobs is the background jobs manager, local and on the workers.
func (p *Primary) newJobs() (*jobs.Manager, error) {
	return jobs.New(jobs.Config{
		Store: p.Store, StateDir: p.cfg.StateDir, Workers: p.Workers, Sandboxes: p.Shells, Notify: p.Continuations.Notify, Events: p.Events,
		Secrets:        p.Secrets,
		CommandCeiling: p.cfg.JobCommandCeiling, AgentCeiling: p.cfg.JobAgentCeiling, Grace: p.cfg.JobGrace,
		AgentReportGrace: p.cfg.AgentReportGrace,
		Clock:            p.cfg.Clock,
		Logger:           p.cfg.Logger,
	})
}

// newInteraction is the interaction toolkit and the engine of approvals, prompts and questions.
func (p *Primary) newInteraction() (*interaction.Service, error) {
	var engine interaction.Engine
	if p.cfg.AgentEngine != "" {
		var err error
		if engine, err = interaction.ParseEngine(p.cfg.AgentEngine); err != nil {
			return nil, err
		}
	}
	return interaction.New(interaction.Config{
		Store: p.Store, Jobs: p.Jobs, Responses: p.Responses, Shells: p.Shells, Engine: engine, Preflight: p.preflight,
		Notify: p.Continuations.Notify, Secrets: p.Secrets, Events: p.Events, PromptWait: p.cfg.PromptWait,
		Clock: p.cfg.Clock, Logger: p.cfg.Logger,
	})
}

// recoverJobs settles what a previous primary left, before anything is served: executing
// approvals are settled (never re-run) and running jobs re-found.
func (p *Primary) recoverJobs(ctx context.Context) error {
	// Recovery finishes even when the primary is told to stop meanwhile: half of it would
	// leave approvals executing or prompts actionable.
	ctx = context.WithoutCancel(ctx)
	settled, err := p.Store.RecoverApprovals(ctx)
	if err != nil {
		return fmt.Errorf("recover approvals: %w", err)
	}
	for _, ap := range settled {
		p.cfg.Logger.Info("approval settled after restart", "approval", ap.ID, "status", ap.Status)
	}
	p.Interaction.Background.TellRecovered(ctx, settled)
	if err := p.Responses.RecoverCallApprovals(ctx); err != nil {
		return fmt.Errorf("recover call approvals: %w", err)
	}
	// Prompts wait in memory: one left pending by the previous primary can never be answered.
	if _, err := p.Interaction.Prompts.ExpirePendingPrompts(ctx); err != nil {
		return fmt.Errorf("expire prompts: %w", err)
	}
	if err := p.Jobs.Recover(ctx); err != nil {
		return fmt.Errorf("recover jobs: %w", err)
	}
	return nil
}
