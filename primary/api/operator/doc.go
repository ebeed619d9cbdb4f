// Package operator serves OperatorService, the people's API. It authenticates every
// OperatorService call by its bearer credential (the digest looked up in an in-memory index of
// the stored ones, so an unknown credential costs no store read) and authorises each method by
// the operator's role (member or admin). The credentials themselves are package operators'.
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
//
// It is one of the primary's API adapters (docs/ARCHITECTURE.md): only package primary
// imports it.
package operator
