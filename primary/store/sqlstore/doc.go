// Package sqlstore is the one copy of the store's SQL: every query and statement of
// store.Reader and store.Tx, written once for SQLite and PostgreSQL alike. The drivers
// (packages sqlite and postgres) own what is really theirs: opening the database, its
// transactions (begin, commit, retries, a leader's fence), and their Dialect. They pass the
// shared code their own clients through thin adapters (Queryer, Conn), so SQLite keeps its
// prepared-statement cache on database/sql and PostgreSQL keeps pgx natively (its statement
// cache and batches).
//
// The SQL is written with "?" placeholders in the subset both databases read alike: ON
// CONFLICT … DO NOTHING / DO UPDATE for inserts that may meet a uniqueness rule (a refused
// row leaves a PostgreSQL transaction usable, where an error would abort it), RETURNING,
// IS NOT DISTINCT FROM, TRUE. Values are the same on both sides: times are Unix nanoseconds
// (NULL for unset, *int64), JSON is text, bytes are []byte (NULL for nil), booleans are Go
// bools. A missing row is sql.ErrNoRows on both clients (pgx.ErrNoRows wraps it) and becomes
// store.ErrNotFound here. The Dialect says only what cannot be written once: how placeholders
// are numbered, what "no limit" is, what an enqueue runs first to keep continuation ids in
// commit order, and whether a WITH may hold an UPDATE. A write that store.Tx lets a driver
// hold back goes through Conn.Queue: PostgreSQL sends it with the transaction's next
// statement, SQLite runs it at once.
//
// It holds SQL only: the rules (arguments, states, transitions, audit entries) are
// store.Portable's.
//
// Adding a stored record touches, in order:
//  1. the next migration file, once for both databases (store/schema/migrations; see package
//     schema for how the few differences are written);
//  2. the record's type, its Reader/Tx methods in store/driver.go and its test in
//     store/drivertest;
//  3. its SQL here, once, in a file named after the record;
//  4. its rule in store.Portable (store/portable_*.go) and the interface it serves.
package sqlstore
