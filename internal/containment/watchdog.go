package containment

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// watchdogScript waits for end of file on its standard input, which comes when the process
// that started it ends, however it ends; then it kills every process left in the commands
// subtree ($1) and removes the subtree. It uses nothing but bash and sleep, so it works on any
// host that can run commands at all.
const watchdogScript = `read -r _
echo 1 >"$1/cgroup.kill" 2>/dev/null
for _ in {1..200}; do
  ev=$(<"$1/cgroup.events") || break
  [[ $ev == *"populated 0"* ]] && break
  sleep 0.01
done
for d in "$1"/*/; do [[ -d $d ]] && echo 1 >"$d/cgroup.kill" 2>/dev/null; rmdir "$d" 2>/dev/null; done
rmdir "$1" 2>/dev/null
exit 0`

// startWatchdog starts the watchdog of the commands subtree and returns the write end of its
// pipe, which must stay open (and is close-on-exec, so no command inherits it) for as long as
// this process lives.
func startWatchdog(commands string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("containment: watchdog pipe: %w", err)
	}
	defer r.Close()
	bash, err := exec.LookPath("bash")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("containment: watchdog: %w", err)
	}
	cmd := &exec.Cmd{
		Path:  bash,
		Args:  []string{"turncli-watchdog", "--noprofile", "--norc", "-c", watchdogScript, "turncli-watchdog", commands},
		Env:   []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Dir:   "/",
		Stdin: r,
		// Its own session: a terminal's Ctrl-C or hang-up that stops this process must not stop
		// the watchdog before it has done its work.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("containment: start the watchdog: %w", err)
	}
	// Not waited for: it ends after this process does, when init reaps it. (Were it killed
	// early, it would stay a zombie; a goroutine parked in Wait for the process's whole life
	// would cost more than that.)
	return w, nil
}
