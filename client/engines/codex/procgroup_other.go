//go:build !unix

package codex

import "os/exec"

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd) {}

// kill kills the CLI.
func kill(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
