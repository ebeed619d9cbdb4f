// Package shellpriv starts the processes of shells (Bash commands and background jobs) without
// the privileges of the primary or worker that runs them.
//
// Every shell is started from one goroutine locked, for the life of the process, to an OS thread
// that has given up on itself what a child inherits from the thread that clones it: the
// capability bounding set is emptied, the inheritable and ambient sets are cleared and
// no_new_privs is set. Go cannot run code between fork and exec, but a child cloned from that
// thread starts with those restrictions, so they cost nothing per command. When the process runs
// as root the child also switches to the shell user (setgroups, setgid, setuid before exec), which
// clears its permitted and effective capabilities; with an empty bounding set and no_new_privs,
// exec gives none back, and setuid or file-capability programs cannot raise them.
//
// The thread is never released: Go's Pdeathsig fires when the thread that started a child exits,
// and a thread that lives as long as the process keeps that signal meaning "the process died".
//
// Without root (no CAP_SETPCAP, CAP_SETUID, CAP_SETGID) the bounding set stays as it is and no
// user switch happens; no_new_privs and the cleared inheritable and ambient sets still apply.
package shellpriv
