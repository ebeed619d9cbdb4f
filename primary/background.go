package primary

import (
	"context"
	"fmt"

	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/primary/continuation"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/workerhub"
)

// newJobs is the background jobs manager, local and on the workers.
func newJobs(cfg Config, db store.Store, workers *workerhub.Hub, shells *shellhost.Runner, outbox *continuation.Outbox, feed *events.Bus, live *secrets.Registry) (*jobs.Manager, error) {
	return jobs.New(jobs.Config{
		Settings: cfg.Jobs, Store: db, StateDir: cfg.StateDir,
		Workers: workers, Sandboxes: shells, Notify: outbox.Notify, Events: feed, Secrets: live,
		OutputSecrets: cfg.Interaction.AgentEnvValues(), ShellUser: shells.ShellUser(), Clock: cfg.Clock, Logger: cfg.Logger,
	})
}

// newInteraction is the interaction toolkit and the engine of approvals, prompts and questions.
func newInteraction(cfg Config, db store.Store, jobsManager *jobs.Manager, responses *response.Manager, shells *shellhost.Runner,
	preflight *shellmode.Preflight, outbox *continuation.Outbox, feed *events.Bus, live *secrets.Registry) (*interaction.Service, error) {
	return interaction.New(interaction.Config{
		Settings: cfg.Interaction, Store: db, Jobs: jobsManager, Responses: responses, Shells: shells, Preflight: preflight,
		Notify: outbox.Notify, Secrets: live, Events: feed, Clock: cfg.Clock, Logger: cfg.Logger,
	})
}

// recoverJobs settles what a previous primary left, before anything is served: executing
// approvals are settled (never re-run) and running jobs re-found.
func (p *Primary) recoverJobs(ctx context.Context) error {
	// Recovery finishes even when the primary is told to stop meanwhile: half of it would
	// leave approvals executing or prompts actionable.
	ctx = context.WithoutCancel(ctx)
	in := p.internals
	settled, err := in.Store.RecoverApprovals(ctx)
	if err != nil {
		return fmt.Errorf("recover approvals: %w", err)
	}
	for _, ap := range settled {
		p.cfg.Logger.Info("approval settled after restart", "approval", ap.ID, "status", ap.Status)
	}
	in.Interaction.Background.TellRecovered(ctx, settled)
	if err := in.Responses.RecoverCallApprovals(ctx); err != nil {
		return fmt.Errorf("recover call approvals: %w", err)
	}
	// Prompts wait in memory: one left pending by the previous primary can never be answered.
	if _, err := in.Interaction.Prompts.ExpirePendingPrompts(ctx); err != nil {
		return fmt.Errorf("expire prompts: %w", err)
	}
	if err := in.Jobs.Recover(ctx); err != nil {
		return fmt.Errorf("recover jobs: %w", err)
	}
	return nil
}
