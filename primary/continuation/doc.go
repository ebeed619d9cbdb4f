// Package continuation is the runtime's outbox of continuations: the messages that resume a
// conversation (a job's or a background agent's outcome, a late answer). It gives the rest of
// the primary one call to emit a continuation, Outbox.Enqueue, and wakes whoever reads the
// outbox when one is committed: an in-process notifier, no polling.
//
// The outbox itself is the store's (store.Continuations): a continuation exists once it is
// committed there, under its idempotency key, so enqueueing the same event twice (a job whose
// end is reported again after a restart) yields one continuation. Acks are global.
//
// It does not serve ContinuationService (package api/continuationapi streams the outbox to the
// runtime), authenticate, or start a model turn: the runtime decides what to do with a
// continuation. docs/ARCHITECTURE.md maps the packages.
package continuation
