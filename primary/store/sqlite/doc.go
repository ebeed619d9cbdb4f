// Package sqlite implements store.Store on an embedded SQLite database (modernc.org/sqlite, no
// cgo) in one file under the primary's state directory.
//
// Durability and concurrency: the database runs in WAL mode with synchronous=FULL, so a method
// that returned nil has reached the disk, and with foreign keys on. All writes go through one
// connection (every transaction BEGIN IMMEDIATE), so this process's writers queue in Go instead
// of failing with SQLITE_BUSY; reads use a separate pool of query-only connections and never
// wait for a writer. busy_timeout covers another process holding the lock (a backup, the sqlite3
// shell).
//
// Schema: numbered migrations embedded from migrations/NNNN_name.sql, applied at Open in order,
// each in its own transaction together with its row in schema_migrations. A database whose
// version is newer than the newest migration known here is refused (store.ErrSchemaTooNew).
// Changing the schema means adding the next file, never editing one that has shipped.
//
// Each exported method is one transaction; helpers that take a *sql.Tx (insertContinuation,
// insertAudit, createJob) let later methods write a continuation, an audit entry or a job in
// the same transaction as the state change that causes it. Approval transitions are
// compare-and-swap statements (they match only the state they need), followed by their audit
// entry in the same transaction.
package sqlite
