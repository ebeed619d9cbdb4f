package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/turncli/turncli/primary/store"
)

// InsertPrompt implements store.Tx.
func (t *tx) InsertPrompt(_ context.Context, p store.Prompt) (int64, error) {
	p.ID, p.MaskedInput = t.s.prompts.nextID(), nullText(p.MaskedInput)
	p.CreatedAt, p.Deadline, p.DecidedAt = stamp(p.CreatedAt), stamp(p.Deadline), stamp(p.DecidedAt)
	return t.s.prompts.insert(t, p), nil
}

// UpdatePrompt implements store.Tx.
func (t *tx) UpdatePrompt(_ context.Context, from store.PromptStatus, p store.Prompt) (bool, error) {
	stored, ok := t.s.prompts.get(p.ID)
	if !ok || stored.Status != from {
		return false, nil
	}
	stored.Status, stored.DecidedBy, stored.DecidedAt = p.Status, p.DecidedBy, stamp(p.DecidedAt)
	stored.Decision, stored.Feedback, stored.ParkedJob = p.Decision, p.Feedback, p.ParkedJob
	t.s.prompts.set(t, p.ID, stored)
	return true, nil
}

// promptOut is a stored prompt as a reader gets it, with its own masked input.
func promptOut(p *store.Prompt) store.Prompt {
	out := *p
	out.MaskedInput = nullText(p.MaskedInput)
	return out
}

// Prompt implements store.Reader.
func (v view) Prompt(_ context.Context, id int64) (store.Prompt, error) {
	defer v.read()()
	return v.s.prompts.read(id, "prompt", promptOut)
}

// ListPrompts implements store.Reader.
func (v view) ListPrompts(_ context.Context, f store.PromptFilter) ([]store.Prompt, error) {
	defer v.read()()
	return newestFirst(&v.s.prompts, f.BeforeID, f.Limit, func(p *store.Prompt) bool {
		return equalOrAny(p.Status, f.Status) && equalOrAny(p.Kind, f.Kind) && inConversation(p.Channel, p.Thread, f.Channel, f.Thread)
	}, promptOut), nil
}

func keyOf(a store.PermissionAllowance) allowanceKey {
	return allowanceKey{a.Channel, a.Thread, a.ToolName, a.Scope}
}

// PutPermissionAllowance implements store.Tx.
func (t *tx) PutPermissionAllowance(_ context.Context, a store.PermissionAllowance) error {
	a.GrantedAt = stamp(a.GrantedAt)
	put(t, t.s.allowances, keyOf(a), a)
	return nil
}

// DeletePermissionAllowance implements store.Tx.
func (t *tx) DeletePermissionAllowance(_ context.Context, a store.PermissionAllowance) (store.PermissionAllowance, error) {
	gone, ok := remove(t, t.s.allowances, keyOf(a))
	if !ok {
		return store.PermissionAllowance{}, fmt.Errorf("%w: allowance", store.ErrNotFound)
	}
	return gone, nil
}

// DeletePermissionAllowances implements store.Tx.
func (t *tx) DeletePermissionAllowances(_ context.Context, scope string) error {
	for k := range t.s.allowances {
		if k.scope == scope {
			remove(t, t.s.allowances, k)
		}
	}
	return nil
}

// PermissionAllowances implements store.Reader, in store.AllowancePosition's order.
func (v view) PermissionAllowances(_ context.Context, f store.AllowanceFilter) ([]store.PermissionAllowance, error) {
	defer v.read()()
	var out []store.PermissionAllowance
	for _, a := range v.s.allowances {
		if inConversation(a.Channel, a.Thread, f.Channel, f.Thread) && equalOrAny(a.ToolName, f.ToolName) &&
			(f.After.GrantedAt.IsZero() || compareAllowance(a, f.After) > 0) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b store.PermissionAllowance) int { return compareAllowance(a, positionOf(b)) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

func positionOf(a store.PermissionAllowance) store.AllowancePosition {
	return store.AllowancePosition{GrantedAt: a.GrantedAt, Channel: a.Channel, Thread: a.Thread, ToolName: a.ToolName, Scope: a.Scope}
}

// compareAllowance orders a against a position in store.AllowancePosition's order: most
// recently granted first, then by channel, thread, tool name and scope; negative when a comes
// first.
func compareAllowance(a store.PermissionAllowance, pos store.AllowancePosition) int {
	return cmp.Or(pos.GrantedAt.Compare(a.GrantedAt), cmp.Compare(a.Channel, pos.Channel), cmp.Compare(a.Thread, pos.Thread),
		cmp.Compare(a.ToolName, pos.ToolName), cmp.Compare(a.Scope, pos.Scope))
}
