package reaper

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/turncli/turncli/internal/reaper/supervisor"
)

// KillSignal asks a supervisor to kill its command's whole tree now: what SIGKILL is to a
// command without one, which would kill the supervisor and leave the tree.
const KillSignal = supervisor.KillSignal

// selfExe is this binary, as the kernel knows it: still the same file after an upgrade
// replaced or removed it on disk.
const selfExe = "/proc/self/exe"

// Wrap makes cmd, not yet started, start a supervisor that runs the command cmd describes.
// cmd.Path and cmd.Args become the supervisor's arguments and cmd.Path this binary; everything
// else — Env, Dir, the standard streams, ExtraFiles and SysProcAttr (the shell user and
// restrictions shellpriv adds among them) — applies to the supervisor, which hands it all on to
// the command. The command leads a process group of its own inside the supervisor's session.
//
// withParent makes the supervisor, and so the command's whole tree, end when this process dies,
// however it dies: for commands. Jobs, which outlive the process that starts them, pass false.
//
// The command is started by the supervisor, too late for cmd.Start to fail when it cannot be;
// Wrap fails instead, as cmd.Start would have, when cmd.Path is not an executable file.
func Wrap(cmd *exec.Cmd, withParent bool) error {
	fi, err := os.Stat(cmd.Path)
	if err == nil && (!fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0) {
		err = &fs.PathError{Op: "exec", Path: cmd.Path, Err: syscall.EACCES}
	}
	if err != nil {
		return err
	}
	parent := 0
	if withParent {
		parent = os.Getpid()
	}
	args := []string{supervisor.Argv0, strconv.Itoa(parent), strconv.Itoa(len(cmd.ExtraFiles)), cmd.Path}
	cmd.Args = append(args, cmd.Args...)
	cmd.Path = selfExe
	return nil
}

// Is reports whether pid is a supervisor started by Wrap.
func Is(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && bytes.HasPrefix(b, []byte(supervisor.Argv0+"\x00"))
}
