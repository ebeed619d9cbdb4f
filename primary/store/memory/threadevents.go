package memory

import (
	"context"
	"strconv"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// QueueThreadEvent implements store.Tx: written at once, in the conversation of the item's
// record, nothing when there is none.
func (t *tx) QueueThreadEvent(_ context.Context, e store.NewThreadEvent, at time.Time) {
	channel, thread, ok := t.threadItemConversation(e.Kind, e.Key)
	if !ok || channel == "" {
		return
	}
	t.s.threadEvents.insert(t, store.ThreadEvent{
		ID: t.s.threadEvents.nextID(), At: stamp(at), Channel: channel, Thread: thread, Kind: e.Kind, Key: e.Key, Change: e.Change,
	})
}

// threadItemConversation is the conversation of the item's record.
func (t *tx) threadItemConversation(kind store.ThreadItemKind, key string) (channel, thread string, ok bool) {
	if kind == store.ThreadProgress {
		p, ok := t.s.progress[key]
		return p.Channel, p.Thread, ok
	}
	id, err := strconv.ParseInt(key, 10, 64)
	if err != nil {
		return "", "", false
	}
	switch kind {
	case store.ThreadApproval:
		r, ok := t.s.approvals.get(id)
		return r.Channel, r.Thread, ok
	case store.ThreadPrompt:
		r, ok := t.s.prompts.get(id)
		return r.Channel, r.Thread, ok
	case store.ThreadCallApproval:
		r, ok := t.s.callApprovals.get(id)
		return r.Channel, r.Thread, ok
	case store.ThreadQuestion:
		r, ok := t.s.questions.get(id)
		return r.Channel, r.Thread, ok
	case store.ThreadJob:
		r, ok := t.s.jobs.get(id)
		return r.Channel, r.Thread, ok
	}
	return "", "", false
}

// ListThreadEvents implements store.Reader.
func (v view) ListThreadEvents(_ context.Context, f store.ThreadEventFilter) ([]store.ThreadEvent, error) {
	defer v.read()()
	var out []store.ThreadEvent
	rows := v.s.threadEvents.rows
	for i := max(f.After, 0); i < int64(len(rows)) && !limited(len(out), f.Limit); i++ {
		if e := rows[i]; inConversation(e.Channel, e.Thread, f.Channel, f.Thread) {
			out = append(out, e)
		}
	}
	return out, nil
}
