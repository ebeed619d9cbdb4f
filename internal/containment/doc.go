// Package containment keeps every process a command or a background job starts inside one
// cgroup v2 leaf of its own, so that everything the command left behind can be found and
// killed, including descendants that called setsid and left the command's process group.
//
// Layout, under the cgroup of the process that uses it (read from /proc/self/cgroup, on the
// cgroup2 mount found in /proc/self/mountinfo):
//
//	turncli.<pid>.commands/c<N>   one leaf per running Bash command of this process (kept for
//	                              the next command when its command left nothing behind)
//	turncli.jobs/j<digest>        one leaf per background job, named after its status file
//
// Commands must not outlive the process that runs them, even when it is SIGKILLed and cannot
// clean up. A watchdog does that: a small bash process, started once, that blocks reading a
// pipe whose only write end this process holds. When this process ends, however it ends, the
// kernel closes the write end, the watchdog's read returns, and it kills the whole commands
// subtree through cgroup.kill and removes it. Jobs are meant to outlive the process that
// started them, so their leaves sit outside that subtree; the job's supervisor kills a job's
// leaf when the job ends or is stopped, and a later process finds it again by the job's status
// file.
//
// Containment needs a writable cgroup v2 hierarchy (root, or a delegated subtree) and a kernel
// with cgroup.kill (5.14). Where either is missing, Available reports why and every Leaf is
// nil: a nil *Leaf does nothing, and callers run the command under a supervisor
// (internal/reaper) instead.
package containment
