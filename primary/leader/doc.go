// Package leader elects one active primary among several that share one PostgreSQL store: a
// lease with a fencing token, taken when free or expired and renewed continuously by its
// holder. The others stand by, learning who leads so they can say where to go.
//
// It owns the lease loop (Elector) over a small Backend, and the PostgreSQL Backend, which
// keeps the lease in the store's database and measures it by the database's clock. It does not
// serve anything or fence writes: the primary serves only while it holds the lease, and the
// PostgreSQL store driver refuses every write whose fencing token is no longer the newest.
//
// The safety rule: a holder counts its lease from the moment it began the request that took
// or renewed it, which precedes the database's own count, so it stops believing it leads
// before the database lets anyone else take over. Fencing covers what that rule cannot (a
// process paused between its check and its write).
package leader
