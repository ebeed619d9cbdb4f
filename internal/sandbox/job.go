package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/turncli/turncli/internal/sandbox/mountview"
	"github.com/turncli/turncli/internal/sandbox/sandboxinit"
)

// Job is the sandbox of one background job: its own init, which outlives the process that
// started it, as the job does.
type Job struct {
	View   mountview.View
	Limits Limits
	// UID and GID are the agent's user the job runs as.
	UID, GID uint32
	// Key names the job's control groups, so a later process finds them again (its status
	// file's path, say).
	Key string
}

// IdentityFDs are the descriptors of cmd.ExtraFiles (as the child numbers them) holding the
// job's identity file for appending and for reading: the init writes its own identity there
// before the command runs (see internal/jobproc), and closes both.
const identityW, identityR = 4, 5

// Wrap makes cmd, not yet started, start the job's sandbox instead, whose init runs what cmd
// describes as j's user, in the view's workspace (cmd.Dir is not used). cmd.ExtraFiles must be the status file and, when identity is true,
// the identity file open for appending and for reading; only the status file reaches the
// command. It makes the job's control groups; RemoveJob removes them.
func (j Job) Wrap(cmd *exec.Cmd, identity bool) error {
	if err := j.View.Validate(); err != nil {
		return err
	}
	if j.UID == 0 || j.GID == 0 {
		return fmt.Errorf("sandbox: a job may not run as root")
	}
	groups, err := newCgroups(jobGroup(j.Key), j.Limits)
	if err != nil {
		return err
	}
	args := []string{sandboxinit.Argv0, sandboxinit.ModeJob,
		sandboxinit.OptUID, strconv.FormatUint(uint64(j.UID), 10),
		sandboxinit.OptGID, strconv.FormatUint(uint64(j.GID), 10)}
	for _, f := range groups.procsFiles() {
		args = append(args, sandboxinit.OptCgroup, f)
	}
	if identity {
		args = append(args, sandboxinit.OptIdentity, fmt.Sprintf("%d:%d", identityW, identityR))
	}
	if _, bounded := groups.dirs["pids"]; !bounded && j.Limits.Processes > 0 {
		// Without a pids group, the job's processes are bounded by RLIMIT_NPROC, which counts
		// every process of the agent's user: a bound per agent rather than per sandbox.
		args = append(args, sandboxinit.OptNproc, strconv.Itoa(j.Limits.Processes))
	}
	if j.Limits.FileBytes > 0 {
		args = append(args, sandboxinit.OptFsize, strconv.FormatInt(j.Limits.FileBytes, 10))
	}
	if j.Limits.OpenFiles > 0 {
		args = append(args, sandboxinit.OptNofile, strconv.Itoa(j.Limits.OpenFiles))
	}
	args = append(args, sandboxinit.OptsEnd)
	args = append(args, j.View.Args()...)
	// The supervisor's arguments (internal/reaper/supervisor): no parent to die with, the
	// status file as the one descriptor above 2, the command.
	args = append(args, "0", "1", cmd.Path)
	cmd.Args = append(args, cmd.Args...)
	cmd.Path = selfExe
	// The init starts at the root and enters the workspace once its view is built: a directory
	// entered before would stay on the host's tree, beneath the view.
	cmd.Dir = "/"
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC
	return nil
}

// RemoveJob removes the control groups of the job keyed key, once its processes are gone.
func RemoveJob(key string) error {
	s := &cgroupSet{dirs: map[string]string{}}
	for c, base := range cgroupHost() {
		s.dirs[c] = groupDir(c, base, jobGroup(key))
	}
	return s.remove()
}

func jobGroup(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "j" + hex.EncodeToString(sum[:8])
}

// IsInit reports whether the process pid is a sandbox's init (which, for a job, supervises it).
func IsInit(cmdline []byte) bool {
	return len(cmdline) > len(sandboxinit.Argv0) && string(cmdline[:len(sandboxinit.Argv0)+1]) == sandboxinit.Argv0+"\x00"
}
