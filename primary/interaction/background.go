package interaction

import (
	"context"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
)

// endTurn closes every background acknowledgement.
const endTurn = "End your turn now and do not poll: this conversation is resumed with the outcome."

func (s *Background) runInBackground(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	command, err := commandArg(call.Arguments)
	if err != nil {
		return catalog.Result{}, err
	}
	lbl, err := label(call.Arguments)
	if err != nil {
		return catalog.Result{}, err
	}
	id := call.Identity
	t, why, err := s.tierFor(ctx, id)
	if err != nil {
		return catalog.Result{}, err
	}
	if t == tierRefused {
		return catalog.Result{}, errors.New(why)
	}
	pl, err := s.placeOf(id.Agent, id.WorkerKey)
	if err != nil {
		return catalog.Result{}, err
	}
	if t == tierApproval {
		ap, created, err := s.cfg.Store.SaveApproval(ctx, store.NewApproval{
			Kind: "command", Channel: id.Channel, Thread: id.Thread, Author: id.Requester, Command: command,
			Workdir: pl.workdir, Ceiling: s.cfg.Jobs.CommandCeiling(), Label: lbl, Agent: id.Agent, WorkerKey: id.WorkerKey,
		})
		if err != nil {
			return catalog.Result{}, err
		}
		s.log.Info("background command awaits approval", "approval", ap.ID, "created", created, "channel", id.Channel)
		if created {
			s.publishApproval("approval.created", ap)
		}
		text := fmt.Sprintf("Saved approval request %d: the command runs once an admin approves it. %s", ap.ID, endTurn)
		if !created {
			text = fmt.Sprintf("The same command is already waiting for approval as request %d; nothing new was saved. %s", ap.ID, endTurn)
		}
		return catalog.Result{Value: map[string]any{"status": "pending_approval", "approval_id": ap.ID, "message": text}}, nil
	}
	spec := s.commandJob(id, pl, command, lbl)
	if r, ok := s.cfg.Responses.Get(id.ResponseID); ok {
		spec.Binding = r.Binding() // the response's own worker, where its shells run
	}
	jobID, err := s.cfg.Jobs.Start(ctx, spec)
	if err != nil {
		return catalog.Result{}, s.jobError(err)
	}
	return catalog.Result{Value: map[string]any{"status": "started", "job_id": jobID,
		"message": fmt.Sprintf("Started background job %d. %s", jobID, endTurn)}}, nil
}

// commandJob is the job of a background command: no Agent CLI, and on the primary's host a
// clean allowlisted environment.
func (s *Background) commandJob(id catalog.Identity, pl place, command, lbl string) jobs.JobSpec {
	spec := jobs.JobSpec{
		Kind: "command", Command: command, Label: lbl, Channel: id.Channel, Thread: id.Thread,
		Author: id.Requester, Agent: id.Agent, WorkerKey: pl.workerKey, Ceiling: s.cfg.Jobs.CommandCeiling(),
	}
	if pl.workerKey == "" {
		spec.Workspace = pl.dir
		spec.Env = s.cfg.Shells.Environment(nil, pl.dir)
	}
	return spec
}

// jobError says why a job was refused as the agent should read it.
func (s *Background) jobError(err error) error {
	total, perThread := s.cfg.Jobs.Caps()
	switch {
	case errors.Is(err, store.ErrJobCapReached):
		return fmt.Errorf("%d background jobs are already running on this primary, its maximum; wait for one to finish, then try again", total)
	case errors.Is(err, store.ErrThreadJobCapReached):
		return fmt.Errorf("%d background jobs are already running in this conversation, its maximum; wait for one to finish, then try again", perThread)
	default:
		return err
	}
}
