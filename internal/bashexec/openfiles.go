package bashexec

import (
	"fmt"
	"os"
	"strings"
)

// prologueFD is the descriptor the command's prologue arrives on: the first after the standard
// streams (Run passes no other extra files).
const prologueFD = 3

// openFilesPrologue returns the read end of a pipe holding what bash runs before the command
// (named by BASH_ENV, which a non-interactive bash sources before its -c script): it sets the
// open-files limit, hard and soft, then closes its own descriptor and forgets BASH_ENV, so the
// command starts already bounded and its children source nothing. The limit is set by the
// shell itself because the command is started from this process, whose own limit must stay.
func openFilesPrologue(limit int, uid, gid int) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("bashexec: prologue pipe: %w", err)
	}
	defer w.Close()
	script := fmt.Sprintf("ulimit -n %d 2>/dev/null; exec %d<&-; unset BASH_ENV\n", limit, prologueFD)
	if _, err := w.WriteString(script); err != nil { // far below a pipe's buffer
		r.Close()
		return nil, fmt.Errorf("bashexec: prologue: %w", err)
	}
	// Bash opens it again by name (/proc/self/fd/3), which the pipe's owner alone may.
	if uid >= 0 {
		if err := r.Chown(uid, gid); err != nil {
			r.Close()
			return nil, fmt.Errorf("bashexec: prologue: %w", err)
		}
	}
	return r, nil
}

// withBashEnv is env with BASH_ENV naming the prologue, and no other BASH_ENV.
func withBashEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "BASH_ENV=") {
			out = append(out, kv)
		}
	}
	return append(out, fmt.Sprintf("BASH_ENV=/proc/self/fd/%d", prologueFD))
}
