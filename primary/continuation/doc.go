// Package continuation serves ContinuationService, the runtime's outbox of continuations, and
// gives the rest of the primary one call to emit a continuation: Service.Enqueue.
//
// The outbox itself is the store's (store.Continuations): a continuation exists once it is
// committed there, under its idempotency key, so enqueueing the same event twice (a job whose
// end is reported again after a restart) yields one continuation. This package streams the
// pending ones to every subscriber, oldest first, then wakes the subscribers when a new one is
// committed: an in-process notifier, no polling. Each Subscribe stream keeps its own cursor,
// so a subscriber never receives a continuation twice on one stream; the next Subscribe (after
// a reconnect, or in a restarted primary) starts again from the oldest unacknowledged one. Acks
// are global.
//
// It does not authenticate (the roleauth interceptor admits only the runtime credential) and
// never starts a model turn: the runtime decides what to do with a continuation.
package continuation
