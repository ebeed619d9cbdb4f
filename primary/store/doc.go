// Package store defines the primary's durable state: the Store interface, the records it keeps
// and the few errors it returns. Its drivers: store/sqlite on an embedded SQLite file under the
// state directory, store/postgres on a PostgreSQL database shared by primaries past one machine
// (both run the one copy of the SQL in store/sqlstore and the one migration sequence in
// store/schema), and store/memory in process memory, the reference for tests that need a store
// without a file or a server.
//
// Portable rules above, persistence below: Portable is the one Store implementation. It checks
// every argument (required fields, lengths, enum values), decides which state may move to
// which, and builds what a transition writes with it (its audit entry, its continuations). A
// Driver only persists: it runs transactions (Driver.Update), answers queries, and writes a
// record back only while it is still in the prior state Portable read (compare-and-set), so a
// lost race writes nothing. A new database is a new Driver and nothing more; package
// store/drivertest is the conformance suite every driver runs from its own tests, against the
// Store built over it, and states what a driver must do (round trips, not-found, conflicts,
// list order and paging, concurrent claims, idempotent continuations, reopening).
//
// Each method is one purpose-named operation and one transaction: a method that changes state
// also writes what must change with it (a conversation mode and its audit entry; later a job's
// result and its continuation) or nothing at all. Callers never see a transaction, a query or a
// table, so every invariant the contract states in terms of "one transaction" or
// "compare-and-swap" lives in one method here.
//
// The interface grows by area, not by reshaping: Store embeds one small interface per area
// (Continuations, ConversationModes, AuditLog), and consumers depend on the area they use.
// Jobs, durable approvals (each state transition a compare-and-swap method that reports a lost
// race as a sentinel error), question requests, permission allow-lists and progress snapshots
// each add an interface embedded in Store, their tables in a new numbered migration, and methods
// that enqueue their continuation and append their audit entry inside their own transaction.
//
// It holds no in-memory state and wakes nobody: package continuation notifies subscribers after
// an enqueue commits. It does not mask secrets; callers write audit details without them.
//
// docs/ARCHITECTURE.md maps the packages and says which owns each term of the glossary.
package store
