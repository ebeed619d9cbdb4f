// Package operator serves OperatorService, the people's API, and owns operator credentials:
// it mints them (random 32 bytes, base64url, of which the store keeps only the SHA-256
// digest), creates the first admin on a fresh state directory, authenticates every
// OperatorService call by its bearer credential (compared in constant time against every
// stored digest) and authorises each method by the operator's role (member or admin).
//
// It lists, reads and cancels background jobs through the jobs engine and decides durable
// approvals through the approvals engine it is given (Jobs, Approvals), and reads approvals
// from the store.
//
// It does not authorise other services (package roleauth does, and an operator credential
// never passes it), does not keep conversation modes, approvals or the audit log itself (the
// store does), and neither runs jobs nor re-runs an approval's gates (the engines do).
package operator
