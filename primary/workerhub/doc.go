// Package workerhub is the primary's side of its workers: it authenticates worker connections
// (a credential per worker key), keeps the connected workers by key, runs a worker-keyed
// response's Bash commands on the worker it is bound to (binding one when needed), relays their
// output with per-command flow control, and fails their commands clearly when a worker goes away.
//
// It also marks Agent CLI calls forwarded by a worker's sandbox proxy with that worker's
// authenticated identity, so the response can accept its grant only through its own worker.
// It does not run processes (the worker does) and does not decide what a grant may do.
package workerhub
