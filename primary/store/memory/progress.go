package memory

import (
	"cmp"
	"context"
	"slices"

	"github.com/turncli/turncli/primary/store"
)

// PutProgress implements store.Tx: the response's snapshot is replaced whole.
func (t *tx) PutProgress(_ context.Context, p store.ProgressSnapshot) error {
	p.Steps, p.UpdatedAt = text(p.Steps), stamp(p.UpdatedAt)
	put(t, t.s.progress, p.ResponseID, p)
	return nil
}

// ListProgress implements store.Reader: most recently updated first, then by response id;
// f.After is the last position of the previous page.
func (v view) ListProgress(_ context.Context, f store.ProgressFilter) ([]store.ProgressSnapshot, error) {
	defer v.read()()
	var out []store.ProgressSnapshot
	for _, p := range v.s.progress {
		if equalOrAny(p.ResponseID, f.ResponseID) && inConversation(p.Channel, p.Thread, f.Channel, f.Thread) &&
			(f.After.UpdatedAt.IsZero() || compareProgress(p, f.After) > 0) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b store.ProgressSnapshot) int {
		return compareProgress(a, store.ProgressPosition{UpdatedAt: b.UpdatedAt, ResponseID: b.ResponseID})
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	for i := range out {
		out[i].Steps = text(out[i].Steps)
	}
	return out, nil
}

// compareProgress orders p against a position in ListProgress's order: negative when p comes
// first.
func compareProgress(p store.ProgressSnapshot, pos store.ProgressPosition) int {
	return cmp.Or(pos.UpdatedAt.Compare(p.UpdatedAt), cmp.Compare(p.ResponseID, pos.ResponseID))
}
