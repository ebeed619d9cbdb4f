// Package workerhub is the primary's side of its workers: it authenticates worker connections
// (a credential per worker key), keeps the connected workers by key, runs a worker-keyed
// response's Bash commands on the worker it is bound to (binding one when needed), relays their
// output with per-command flow control, and fails their commands clearly when a worker goes away.
//
// It relays background jobs too, as the transport of the jobs engine's worker port (package
// jobs owns the vocabulary: jobs.Workers, which the Hub implements, jobs.WorkerJob and its
// reports): it sends a job to a worker of the response's key and carries the primary's cancel,
// attach and acknowledgement to the worker holding the job; what workers report about jobs (the
// jobs each holds when it connects, starts, log bytes, results) goes to a jobs.WorkerSink in
// order, on a goroutine of its own so command output never waits for it. It keeps no job state:
// the sink (the jobs manager) does.
//
// The Hub is the connected workers; Service is WorkerService over it, built after the engines
// it hands reports to, which themselves need the Hub.
//
// It also marks Agent CLI calls forwarded by a worker's sandbox proxy with that worker's
// authenticated identity, so the response can accept its grant only through its own worker.
// It does not run processes (the worker does) and does not decide what a grant may do.
//
// It is one of the two stream engines of docs/ARCHITECTURE.md: WorkerService's stream is the
// hub's state, so the hub reads the worker protocol itself.
package workerhub
