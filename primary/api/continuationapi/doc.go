// Package continuationapi serves ContinuationService: it streams the primary's outbox
// (package continuation) to the runtime, pending continuations oldest first and then each new
// one as it is committed, and takes the runtime's acknowledgements. Each Subscribe stream
// keeps its own cursor, so a subscriber never receives a continuation twice on one stream; the
// next Subscribe (after a reconnect, or in a restarted primary) starts again from the oldest
// unacknowledged one.
//
// It decides nothing about continuations and does not authenticate (the roleauth interceptor
// admits only the runtime credential). It is one of the primary's API adapters
// (docs/ARCHITECTURE.md): only package primary imports it.
package continuationapi
