// Package postgres is the store.Driver on PostgreSQL (github.com/jackc/pgx/v5 through a
// pgxpool), the store of primaries past one machine; Open returns the portable store.Store
// over it. It owns connecting (the pool and its URL parameters), its transactions (retries and
// the leader's fence) and PostgreSQL's dialect; the SQL of every record is package sqlstore's
// and the rules (arguments, states, transitions, audit entries) are store.Portable's. The
// driver passes store/drivertest like every driver.
//
// Connection: a postgres:// URL. Its pool_max_conns, pool_min_conns,
// pool_max_conn_lifetime, pool_max_conn_idle_time and pool_health_check_period parameters
// set the pool (pgxpool's own names); Options.MaxConns is used when the URL sets none.
//
// Schema: the store's numbered migrations (package schema, shared with SQLite: a version is
// the same schema on both), applied at Open in one transaction that first takes a
// transaction-scoped advisory lock, so primaries starting together apply each migration once;
// each is recorded in schema_migrations. A database of the numbering PostgreSQL had before is
// renumbered in that transaction (legacy.go). A database whose version is newer than the
// newest migration known here is refused (store.ErrSchemaTooNew).
//
// Driver.Update is one SERIALIZABLE transaction; when PostgreSQL reports a serialization
// failure or a deadlock (SQLSTATE 40001, 40P01) the transaction is run again from the start,
// up to maxAttempts times, as store.Driver allows. Each Update method of a transaction is one
// compare-and-set statement that matches only the prior state it is given, so of two
// primaries claiming one record (an approval, a call approval, a job's end) one commits and
// the other, run again, reads the new state and loses the race as Portable reports it. No
// transition takes "any next record", so no claim needs SKIP LOCKED. Every write transaction
// begins in beginWrite: the one place a writer's credentials (a leader's fencing token) are
// to be checked before anything is written. BEGIN and that check go to the server with the
// transaction's first statement, in one round trip (pipeline.go): a write in flight holds the
// token from its first statement to its commit. A transaction that reads no result before
// committing (an approval's decision, a job's end) sends everything with its COMMIT; a
// queued compare-and-set that misses fails it on the server (store_expect, migration 0014),
// so the COMMIT rolls back what followed.
//
// Continuation ids are assigned in commit order (a transaction-scoped advisory lock around
// the insert), so a subscriber that has read up to an id never misses a continuation that
// commits later with a smaller one.
package postgres
