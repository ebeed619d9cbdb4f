// Package jobs runs the primary's background jobs: `bash -lc <command>` detached in its own
// session, with an explicit environment, in the conversation's workspace, under a ceiling.
//
// It owns the job's life: the caps (checked in the transaction that records the job), the full
// log file and its rolling tail, the plain-language outcome, and the one transaction that saves
// the result together with the job's continuation (idempotency key "job:<id>"). Jobs outlive
// the primary; at boot Recover re-finds each running job by pid and process start time and
// never re-runs or signals anything else.
//
// It does not decide whether a job may run (modes, approvals) and does not run jobs on
// workers.
package jobs
