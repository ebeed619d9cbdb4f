package primary

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
)

// startJobs assembles background jobs and the interaction toolkit.
func (p *Primary) startJobs(ctx context.Context, db store.Store) error {
	// Clipped: callers append their own secrets to it, which must copy, never share.
	known := slices.Clip(p.knownSecrets())
	secrets := func() []string { return known }
	var err error
	p.Jobs, err = jobs.New(jobs.Config{
		Store: db, StateDir: p.cfg.StateDir, Workers: p.Workers, Notify: p.Continuations.Notify, Events: p.Events,
		Secrets:        secrets,
		CommandCeiling: p.cfg.JobCommandCeiling, AgentCeiling: p.cfg.JobAgentCeiling, Grace: p.cfg.JobGrace,
		AgentReportGrace: p.cfg.AgentReportGrace,
		Logger:           p.cfg.Logger,
	})
	if err != nil {
		return err
	}
	p.Workers.SetJobSink(p.Jobs)
	var engine interaction.Engine
	if p.cfg.AgentEngine != "" {
		if engine, err = interaction.ParseEngine(p.cfg.AgentEngine); err != nil {
			return err
		}
	}
	p.Interaction, err = interaction.New(interaction.Config{
		Store: db, Jobs: p.Jobs, Responses: p.Responses, Shells: p.Shells, Engine: engine,
		Notify: p.Continuations.Notify, Secrets: secrets, Events: p.Events, PromptWait: p.cfg.PromptWait,
		Logger: p.cfg.Logger,
	})
	if err != nil {
		return err
	}
	if err := p.Registry.Register(ctx, p.Interaction); err != nil {
		return err
	}
	return nil
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
	p.Interaction.TellRecovered(ctx, settled)
	if err := p.Responses.RecoverCallApprovals(ctx); err != nil {
		return fmt.Errorf("recover call approvals: %w", err)
	}
	// Prompts wait in memory: one left pending by the previous primary can never be answered.
	if _, err := p.Interaction.ExpirePendingPrompts(ctx); err != nil {
		return fmt.Errorf("expire prompts: %w", err)
	}
	if err := p.Jobs.Recover(ctx); err != nil {
		return fmt.Errorf("recover jobs: %w", err)
	}
	return nil
}

// knownSecrets are the credentials this primary holds in clear, redacted from job output and
// from what people see: read once, at start (the first admin's credential stays a secret
// after its file is removed).
func (p *Primary) knownSecrets() []string {
	out := []string{p.runtimeToken}
	if p.operatorFile != "" {
		if b, err := os.ReadFile(p.operatorFile); err == nil {
			out = append(out, strings.TrimSpace(string(b)))
		}
	}
	return append(out, p.workerSecrets...)
}
