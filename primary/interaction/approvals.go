package interaction

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
)

// ErrRefused is what Approve wraps when a gate refuses an approved command, as
// fmt.Errorf("%w: <why, in plain words>", ErrRefused): a FailedPrecondition whose whole
// message is shown to the operator, so it must hold no secret.
var ErrRefused = fault.New(fault.FailedPrecondition, "the command cannot start now")

// Approve starts an approved command exactly once. Every gate is checked again against
// current settings first (only an admin approves; the conversation's mode still allows
// background commands; the place it runs is unchanged; a cap is free); a gate that refuses
// leaves the approval pending. Then pending → executing is a compare-and-swap (a replay is
// store.ErrConflict), the job is recorded linked to the approval in one transaction, and the
// approval is consumed, or failed when the job could not be recorded.
func (s *Background) Approve(ctx context.Context, id int64, by store.Operator) (store.Approval, error) {
	if err := CheckCommandApprover(by); err != nil {
		return store.Approval{}, err
	}
	ap, err := s.cfg.Store.Approval(ctx, id)
	if err != nil {
		return store.Approval{}, err
	}
	if ap.Status != store.ApprovalPending {
		return store.Approval{}, fmt.Errorf("%w: approval %d is %s", store.ErrConflict, id, ap.Status)
	}
	if err := s.recheck(ctx, ap); err != nil {
		return store.Approval{}, err
	}
	ap, err = s.cfg.Store.BeginApproval(ctx, id, by.Name)
	if err != nil {
		return store.Approval{}, err
	}
	// From here the approval is executing: it must reach consumed or failed even when the
	// person's request goes away.
	ctx = context.WithoutCancel(ctx)
	pl, err := s.placeOf(ap.Agent, ap.WorkerKey)
	if err != nil {
		return s.settleFailed(ctx, ap, err)
	}
	spec := s.commandJob(identityOf(ap), pl, ap.Command, ap.Label)
	spec.Ceiling = ap.Ceiling
	jobID, err := s.cfg.Jobs.StartWith(ctx, spec, func(ctx context.Context, j store.NewJob, caps store.JobCaps) (store.Job, error) {
		return s.cfg.Store.CreateApprovedJob(ctx, id, j, caps)
	})
	if err != nil {
		return s.settleFailed(ctx, ap, s.jobError(err))
	}
	s.log.Info("approved command started", "approval", id, "job", jobID, "by", by.Name)
	settled, err := s.cfg.Store.SettleApproval(ctx, id, store.ApprovalConsumed, "started as job "+strconv.FormatInt(jobID, 10))
	if err == nil {
		s.publishApproval("approval.decided", settled)
	}
	return settled, err
}

// CheckCommandApprover refuses a person who may not approve a background command: only an
// admin may. It is the rule's one home: Approve applies it, and a surface that offers only
// the decisions a person may take (decision links) asks it first.
func CheckCommandApprover(by store.Operator) error {
	if by.Role != store.RoleAdmin {
		return fmt.Errorf("%w: only an admin can approve; %q is a %s", ErrRefused, by.Name, by.Role)
	}
	return nil
}

// publishApproval puts an approval's change on the live feed.
func (s *Background) publishApproval(kind string, ap store.Approval) {
	s.cfg.Events.Publish(kind, store.ApprovalSubject(ap.ID), map[string]any{
		"id": ap.ID, "status": string(ap.Status), "channel": ap.Channel, "thread": ap.Thread, "author": ap.Author,
		"agent": ap.Agent, "label": ap.Label, "command": ap.Command, "decided_by": ap.DecidedBy, "job_id": ap.JobID,
		"note": ap.Note, "comments": len(ap.Comments),
	})
}

// recheck applies the gates of a new request again, now.
func (s *Background) recheck(ctx context.Context, ap store.Approval) error {
	setting, err := s.cfg.Store.ConversationMode(ctx, ap.Channel, ap.Thread)
	if err != nil {
		return err
	}
	if setting.Mode != store.ModeAuto && setting.Mode != store.ModeAdmin {
		return fmt.Errorf("%w: the conversation's mode is now %s, which does not allow background commands; set it to auto or admin first",
			ErrRefused, setting.Mode)
	}
	pl, err := s.placeOf(ap.Agent, ap.WorkerKey)
	if err != nil {
		return err
	}
	if pl.workdir != ap.Workdir {
		return fmt.Errorf("%w: the command would now run in %s, not %s as requested", ErrRefused, pl.workdir, ap.Workdir)
	}
	if err := s.cfg.Jobs.CheckCaps(ctx, ap.Channel, ap.Thread); err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, s.jobError(err))
	}
	return nil
}

func (s *Background) settleFailed(ctx context.Context, ap store.Approval, cause error) (store.Approval, error) {
	s.log.Warn("approved command did not start", "approval", ap.ID, "err", cause)
	settled, err := s.cfg.Store.SettleApproval(ctx, ap.ID, store.ApprovalFailed, cause.Error(), note(ap, "failed", fmt.Sprintf(
		"The background command of approval request %d was approved but could not start: %s. "+
			"Tell the user plainly; do not run it another way.", ap.ID, cause)))
	if err != nil {
		return store.Approval{}, errors.Join(cause, err)
	}
	s.cfg.Notify()
	s.publishApproval("approval.decided", settled)
	return settled, nil
}

// Deny refuses a pending approval and tells the conversation, in one transaction.
func (s *Background) Deny(ctx context.Context, id int64, by store.Operator, reason string) (store.Approval, error) {
	ap, err := s.cfg.Store.Approval(ctx, id)
	if err != nil {
		return store.Approval{}, err
	}
	text := fmt.Sprintf("%s denied the background command of approval request %d.", by.Name, id)
	if reason != "" {
		text += " Reason: " + reason
	}
	ap, err = s.cfg.Store.DenyApproval(ctx, id, by.Name, reason,
		note(ap, "denied", text+"\nDo not run it another way; tell the user plainly if it matters."))
	if err != nil {
		return store.Approval{}, err
	}
	s.cfg.Notify()
	s.publishApproval("approval.decided", ap)
	return ap, nil
}

// Comment adds a comment to a pending approval and passes it to the conversation, in one
// transaction.
func (s *Background) Comment(ctx context.Context, id int64, by store.Operator, text string) (store.Approval, error) {
	ap, err := s.cfg.Store.Approval(ctx, id)
	if err != nil {
		return store.Approval{}, err
	}
	// Each comment is its own event: two at once must not share a key.
	ap, err = s.cfg.Store.CommentApproval(ctx, id, by.Name, text, note(ap, "comment-"+uuid.NewString(), fmt.Sprintf(
		"%s commented on approval request %d (still waiting for a decision): %s", by.Name, id, text)))
	if err != nil {
		return store.Approval{}, err
	}
	s.cfg.Notify()
	s.publishApproval("approval.commented", ap)
	return ap, nil
}

// note is a continuation telling the approval's conversation about one event of it.
func note(ap store.Approval, event, text string) store.NewContinuation {
	return store.NewContinuation{
		IdempotencyKey: "approval:" + strconv.FormatInt(ap.ID, 10) + ":" + event,
		Channel:        ap.Channel, Thread: ap.Thread, Text: text,
	}
}

// TellRecovered tells the conversations of approvals that boot recovery settled as failed
// (the primary restarted while starting their command) that nothing ran.
func (s *Background) TellRecovered(ctx context.Context, settled []store.Approval) {
	told := false
	for _, ap := range settled {
		if ap.Status != store.ApprovalFailed {
			continue
		}
		_, created, err := s.cfg.Store.EnqueueContinuation(ctx, note(ap, "failed", fmt.Sprintf(
			"The background command of approval request %d was approved, but the primary restarted while starting it: "+
				"it did not run and will not be retried. Tell the user plainly; do not run it another way.", ap.ID)))
		if err != nil {
			s.log.Error("approval continuation not saved", "approval", ap.ID, "err", err)
			continue
		}
		told = told || created
		s.publishApproval("approval.decided", ap)
	}
	if told {
		s.cfg.Notify()
	}
}
