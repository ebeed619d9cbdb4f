//go:build unix

package codex

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the CLI in a process group of its own: the npm launcher, the native binary
// it starts, and their MCP servers and commands, so that kill reaches all of them.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// kill kills the CLI's process group. The caller has not waited for the CLI yet, so the group
// cannot have been recycled.
func kill(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
