package memory

import (
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// state is every record of a database, in the tables of the SQL schema, with the indexes
// that enforce its unique rules.
type state struct {
	continuations table[store.Continuation]
	// continuationKeys finds a continuation by its idempotency key.
	continuationKeys map[string]int64
	audit            table[store.AuditEntry]

	conversationModes map[conversation]store.ModeSetting
	shellModes        map[agentInConversation]store.ShellModeSetting
	operators         map[string]store.Operator

	jobs table[store.Job]
	// runningJobs are the ids of the running jobs, which every job's creation counts.
	runningJobs map[int64]bool
	approvals   table[store.Approval]
	// pendingApprovals finds the pending approval of a key: at most one is.
	pendingApprovals map[string]int64
	// approvalJobs finds the approval that started a job: at most one did.
	approvalJobs  map[int64]int64
	callApprovals table[store.CallApproval]
	// calls finds a call approval by its response and call id: at most one is.
	calls map[responseCall]int64

	prompts    table[store.Prompt]
	allowances map[allowanceKey]store.PermissionAllowance

	questions table[store.QuestionRequest]
	// pendingQuestions finds a person's pending request in a thread: at most one is.
	pendingQuestions map[questionOwner]int64

	progress map[string]store.ProgressSnapshot

	threadEvents  table[store.ThreadEvent]
	identityLinks map[chatAccount]store.IdentityLink

	surfaceCards     map[surfaceItem]store.SurfaceCard
	surfacePositions map[surfacePlace]store.SurfacePosition
}

func (s *state) init() {
	s.continuationKeys = map[string]int64{}
	s.conversationModes = map[conversation]store.ModeSetting{}
	s.shellModes = map[agentInConversation]store.ShellModeSetting{}
	s.operators = map[string]store.Operator{}
	s.runningJobs = map[int64]bool{}
	s.pendingApprovals = map[string]int64{}
	s.approvalJobs = map[int64]int64{}
	s.calls = map[responseCall]int64{}
	s.allowances = map[allowanceKey]store.PermissionAllowance{}
	s.pendingQuestions = map[questionOwner]int64{}
	s.progress = map[string]store.ProgressSnapshot{}
	s.identityLinks = map[chatAccount]store.IdentityLink{}
	s.surfaceCards = map[surfaceItem]store.SurfaceCard{}
	s.surfacePositions = map[surfacePlace]store.SurfacePosition{}
}

type conversation struct{ channel, thread string }

type agentInConversation struct {
	conversation
	agent string
}

type responseCall struct{ responseID, callID string }

type allowanceKey struct{ channel, thread, toolName, scope string }

type chatAccount struct{ surface, chatUserID string }

type questionOwner struct {
	conversation
	requester string
}

// inConversation reports whether a record of (channel, thread) matches a filter's
// conversation: any when the filter's channel is empty, else exactly its channel and thread.
func inConversation(channel, thread, wantChannel, wantThread string) bool {
	return wantChannel == "" || (channel == wantChannel && thread == wantThread)
}

// equalOrAny reports whether value matches a filter's want: any when want is empty.
func equalOrAny[S ~string](value, want S) bool { return want == "" || value == want }

// table holds records named by id, in id order: row i has id i+1. Ids count from 1 and no
// record is ever deleted; an insert rolled back gives its id back, as SQLite's does.
type table[R any] struct{ rows []R }

// nextID is the id the next insert gets.
func (tb *table[R]) nextID() int64 { return int64(len(tb.rows)) + 1 }

// get returns the record with id.
func (tb *table[R]) get(id int64) (R, bool) {
	if id < 1 || id > int64(len(tb.rows)) {
		var zero R
		return zero, false
	}
	return tb.rows[id-1], true
}

// read returns the record with id as a reader gets it (out), or store.ErrNotFound naming what
// it is.
func (tb *table[R]) read(id int64, what string, out func(*R) R) (R, error) {
	r, ok := tb.get(id)
	if !ok {
		return r, fmt.Errorf("%w: %s %d", store.ErrNotFound, what, id)
	}
	return out(&r), nil
}

// insert appends r, whose id must be nextID, and returns its id.
func (tb *table[R]) insert(t *tx, r R) int64 {
	tb.rows = append(tb.rows, r)
	n := len(tb.rows)
	t.onRollback(func() {
		var zero R
		tb.rows[n-1] = zero // drop what it references
		tb.rows = tb.rows[:n-1]
	})
	return int64(n)
}

// set replaces the record with id, which exists.
func (tb *table[R]) set(t *tx, id int64, r R) {
	old := tb.rows[id-1]
	tb.rows[id-1] = r
	t.onRollback(func() { tb.rows[id-1] = old })
}

// newestFirst returns up to limit (zero: no limit) records that match, with an id below
// before (any when zero), newest first, each through out.
func newestFirst[R, V any](tb *table[R], before int64, limit int, match func(*R) bool, out func(*R) V) []V {
	end := int64(len(tb.rows))
	if before > 0 && before-1 < end {
		end = before - 1
	}
	var list []V
	for i := end - 1; i >= 0 && !limited(len(list), limit); i-- {
		if r := &tb.rows[i]; match(r) {
			list = append(list, out(r))
		}
	}
	return list
}

// put sets m[k] to v.
func put[K comparable, V any](t *tx, m map[K]V, k K, v V) {
	old, had := m[k]
	m[k] = v
	t.onRollback(func() {
		if had {
			m[k] = old
		} else {
			delete(m, k)
		}
	})
}

// remove deletes m[k] and reports whether it was there.
func remove[K comparable, V any](t *tx, m map[K]V, k K) (V, bool) {
	old, had := m[k]
	if had {
		delete(m, k)
		t.onRollback(func() { m[k] = old })
	}
	return old, had
}
