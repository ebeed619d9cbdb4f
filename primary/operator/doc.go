// Package operator serves OperatorService, the people's API, and owns operator credentials:
// it mints them (random 32 bytes, base64url, of which the store keeps only the SHA-256
// digest), creates the first admin on a fresh state directory, authenticates every
// OperatorService call by its bearer credential (compared in constant time against every
// stored digest) and authorises each method by the operator's role (member or admin).
//
// It does not authorise other services (package roleauth does, and an operator credential
// never passes it) and does not keep conversation modes or the audit log itself (the store
// does).
package operator
