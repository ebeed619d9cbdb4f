// Package memory is the store.Driver that keeps every record in process memory: the reference
// driver that runs the same conformance suite (store/drivertest) and benchmarks as the
// database drivers, and the store of tests that need the primary's durable state without a
// file or a server. Open returns the portable store.Store over it; the rules (arguments,
// states, transitions, audit entries) are store.Portable's, as over every driver.
//
// Nothing survives the process: a primary never runs on it. A Database is the storage; every
// Driver opened on it (Database.Open) sees what the others committed, as two processes on one
// database file would, and closing a driver keeps the records for the next one (a restart).
//
// Transactions: Driver.Update holds the database's one write lock for the whole of f, so
// transactions run one at a time and are serializable; f is never run again. A transaction
// writes in place and logs how to undo each write: when f fails (or panics) the log is
// replayed backwards and nothing f wrote is kept. Reads outside a transaction share a read
// lock, so they run together and see only committed state.
//
// The driver behaves as the SQL drivers' schema does where Portable relies on it: ids count
// from 1 in each table (an id given to a rolled-back insert is given again, as SQLite does),
// the unique rules of the schema (an operator's name and digest, a response's call id, one
// pending approval per key, one pending question request per person and thread, a
// continuation's idempotency key) refuse or find the existing record as the SQL does, times
// are kept to the nanosecond in UTC, and every list orders, filters and pages as the SQL
// queries do. It checks none of the schema's CHECK constraints: Portable decides what is
// valid. Values are copied on the way in and out, so no caller shares memory with the store.
package memory
