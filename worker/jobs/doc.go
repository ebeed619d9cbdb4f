// Package jobs runs a worker's background jobs (run_in_background, run_agent_in_background):
// long commands that outlive the connection to the primary and restarts of the worker itself.
//
// It owns each job's durable record under <StateDir>/jobs (<id>.json, written atomically), its
// log (<id>.log), exit status (<id>.status) and the identity its process writes before its
// command runs (<id>.proc, so a worker killed mid-launch leaves a job the next one finds);
// launching it through internal/jobproc in the agent's workspace with the shell environment
// (never the worker's credential); supervising it to its ceiling, which is measured from its
// start and so holds across restarts; finding it again by pid and start time when the worker
// starts; and mirroring its log and result to whichever primary connection is current, from
// the offset the primary asks for. A job's record is kept until the primary acknowledges its
// result.
//
// It does not decide whether a job may run (the primary does), count jobs against the worker's
// command capacity, or describe outcomes in words.
package jobs
