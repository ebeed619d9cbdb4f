// Package sqlite is the store.Driver on an embedded SQLite database (modernc.org/sqlite, no
// cgo) in one file under the primary's state directory; Open returns the portable store.Store
// over it. It owns opening the file (pragmas, the single writer and the read pool), its
// transactions and their prepared statements, and SQLite's dialect; the SQL of every record is
// package sqlstore's and the rules (arguments, states, transitions, audit entries) are
// store.Portable's. The driver passes store/drivertest like every driver.
//
// Durability and concurrency: the database runs in WAL mode with synchronous=FULL, so a method
// that returned nil has reached the disk, and with foreign keys on. All writes go through one
// connection (every transaction BEGIN IMMEDIATE), so this process's writers queue in Go instead
// of failing with SQLITE_BUSY, and the transactions that queued while another ran commit
// together, each in a savepoint of its own (group.go): one sync of the log for a burst of
// writers. Reads use a separate pool of query-only connections and never wait for a writer. busy_timeout covers another process holding the lock (a backup, the sqlite3
// shell).
//
// Schema: the store's numbered migrations (package schema, shared with PostgreSQL), applied
// at Open in order, each in its own transaction together with its row in schema_migrations. A
// database whose version is newer than the newest migration known here is refused
// (store.ErrSchemaTooNew).
//
// Driver.Update is one BEGIN IMMEDIATE transaction on the single writer, so transactions are
// serializable and never retried. Each Update method of a transaction is one compare-and-set
// statement that matches only the prior state it is given; the schema's CHECKs and partial
// unique indexes (one pending approval per key, one pending question request per person and
// thread) hold even against another process writing the file.
package sqlite
