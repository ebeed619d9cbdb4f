// Package jobproc runs background job processes that outlive the process that started them:
// `bash -lc <command>` in its own session, with an explicit environment, output appended to a
// log file, and its exit status written to a status file so a later process can learn how it
// ended. A job is found again by pid plus process start time, so a recycled pid is never
// mistaken for it or signalled; the process writes both to an identity file before its command
// runs, so a launcher killed before recording them leaves a job that can still be found, or
// (Settle) one whose command never runs.
//
// It owns the process mechanics shared by the primary's local jobs and the worker's jobs:
// launch, liveness, the ceiling and cancel protocol (SIGTERM to the group, SIGKILL after a
// grace period), reaping, and the rolling tail of a log. What a job starts ends with it: its
// cgroup leaf (internal/containment) holds the whole tree, or where the host has none, the
// job's process is a supervisor (internal/reaper), detached like the job, that kills the tree
// when the job ends or is killed. It does not keep records, decide whether a job may run, or
// describe outcomes in words.
package jobproc
