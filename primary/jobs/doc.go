// Package jobs runs the primary's background jobs: `bash -lc <command>` detached in its own
// session on the primary's host, or on a worker of the job's key, with an explicit
// environment, in the agent's workspace, under a ceiling.
//
// It owns a job's life: the caps (checked in the transaction that records the job), the full
// log file (written by the process for local jobs, mirrored from the worker for worker jobs)
// and its rolling tail, the plain-language outcome, and the one transaction that saves the
// result together with the job's continuation (idempotency key "job:<id>"). Jobs outlive the
// primary: at boot Recover re-finds each local job by pid and process start time (read from the
// identity file its process writes, when the primary died before recording them), and worker
// jobs are re-attached when their worker reports them. Nothing is ever re-run, and a pid now
// naming another process is never signalled.
//
// It does not decide whether a job may run (modes, approvals: package interaction does) and
// does not run processes on workers itself (package workerhub carries the job there).
//
// docs/ARCHITECTURE.md maps the packages and says which owns each term of the glossary.
package jobs
