// Package operator serves OperatorService, the people's API, and owns operator credentials:
// it mints them (random 32 bytes, base64url, of which the store keeps only the SHA-256
// digest), creates the first admin on a fresh state directory, authenticates every
// OperatorService call by its bearer credential (compared in constant time against every
// stored digest) and authorises each method by the operator's role (member or admin).
//
// It lists, reads and cancels background jobs through the jobs engine, decides durable
// approvals, prompts and question forms through the engines it is given (Jobs, Approvals,
// Prompts, Questions), lists progress snapshots (Progress), reads approvals from the store,
// shows the live responses read-only (response.Manager) and streams the live feed of changes
// (events.Bus) to watchers. It shows, sets and resets each agent's shell mode in a conversation,
// storing the minimal mode only after its preflight (package shellmode) finds no problem.
//
// It does not authorise other services (package roleauth does, and an operator credential
// never passes it), does not keep conversation modes, approvals, prompts, questions, progress
// or the audit log itself (the store does), neither runs jobs nor re-runs an approval's gates
// nor checks answers (the engines do), and never changes a response.
package operator
