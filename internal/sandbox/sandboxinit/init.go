package sandboxinit

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/turncli/turncli/internal/sandbox/mountview"
)

// Argv0 is a sandbox init's argv[0]: how init recognises one, and what ps shows.
const Argv0 = "turncli-sandbox"

// Modes.
const (
	ModeHold = "hold"
	ModeJob  = "job"
)

// Ready is the line a holding init writes on its standard output once the sandbox is built;
// anything else it writes there is why it could not be.
const Ready = "ready"

// Options of the init itself, before the view's arguments.
const (
	OptUID      = "--uid"      // job: the user the command runs as
	OptGID      = "--gid"      // job: its group
	OptCgroup   = "--cgroup"   // a cgroup.procs file to join, before anything else (repeatable)
	OptIdentity = "--identity" // job: "W:R", the identity file open for appending (W) and reading (R)
	OptNproc    = "--nproc"    // RLIMIT_NPROC of the command
	OptFsize    = "--fsize"    // RLIMIT_FSIZE of the command, in bytes
	OptNofile   = "--nofile"   // RLIMIT_NOFILE of the command
	OptsEnd     = "--"
)

func init() {
	if len(os.Args) < 2 || os.Args[0] != Argv0 {
		return
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

type options struct {
	uid, gid             int
	cgroups              []string
	idW, idR             int
	nproc, fsize, nofile uint64
}

func run(mode string, args []string) int {
	runtime.LockOSThread() // credentials and parent-death signals belong to a thread
	o, rest, ok := parseOptions(args)
	if !ok {
		return fail(mode, "arguments", syscall.EINVAL)
	}
	view, rest, err := mountview.ParseArgs(rest)
	if err != nil {
		return fail(mode, "arguments", err)
	}
	// Host identity first: once /proc is the sandbox's, this process is pid 1.
	hostPid, start, err := selfIdentity()
	if err != nil {
		return fail(mode, "read its own identity", err)
	}
	for _, cg := range o.cgroups {
		if err := os.WriteFile(cg, []byte("0"), 0); err != nil {
			return fail(mode, "join the control group "+cg, err)
		}
	}
	if err := view.Build(); err != nil {
		return fail(mode, "build the sandbox", err)
	}
	// A directory entered before the mounts stays on the host's tree beneath them: enter the
	// workspace only now, through the view.
	dir := view.Workspace
	if dir == "" {
		dir = "/"
	}
	if err := syscall.Chdir(dir); err != nil {
		return fail(mode, "enter "+dir, err)
	}
	switch mode {
	case ModeHold:
		return hold()
	case ModeJob:
		return job(o, hostPid, start, rest)
	}
	return fail(mode, "mode", syscall.EINVAL)
}

func parseOptions(args []string) (options, []string, bool) {
	o := options{uid: -1, gid: -1, idW: -1, idR: -1}
	for len(args) > 0 && args[0] != OptsEnd {
		if len(args) < 2 {
			return o, nil, false
		}
		name, val := args[0], args[1]
		args = args[2:]
		var err error
		switch name {
		case OptUID:
			o.uid, err = strconv.Atoi(val)
		case OptGID:
			o.gid, err = strconv.Atoi(val)
		case OptCgroup:
			o.cgroups = append(o.cgroups, val)
		case OptIdentity:
			w, r, _ := strings.Cut(val, ":")
			if o.idW, err = strconv.Atoi(w); err == nil {
				o.idR, err = strconv.Atoi(r)
			}
		case OptNproc:
			o.nproc, err = strconv.ParseUint(val, 10, 64)
		case OptFsize:
			o.fsize, err = strconv.ParseUint(val, 10, 64)
		case OptNofile:
			o.nofile, err = strconv.ParseUint(val, 10, 64)
		default:
			return o, nil, false
		}
		if err != nil {
			return o, nil, false
		}
	}
	if len(args) == 0 {
		return o, nil, false
	}
	return o, args[1:], true
}

// fail says on stderr (a job's log, or the holder's pipe) why the sandbox could not start.
func fail(mode, what string, err error) int {
	_, _ = os.Stderr.WriteString(Argv0 + " " + mode + ": " + what + ": " + err.Error() + "\n")
	return 126
}

// selfIdentity is this process's pid and start time as the host sees them.
func selfIdentity() (int, uint64, error) {
	link, err := os.Readlink("/proc/self")
	if err != nil {
		return 0, 0, err
	}
	pid, err := strconv.Atoi(link)
	if err != nil {
		return 0, 0, err
	}
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command name, which ends at the last ')': state is field 3, start time 22.
	i := len(b) - 1
	for i >= 0 && b[i] != ')' {
		i--
	}
	field, n := 2, 0
	for j := i + 1; j < len(b); j++ {
		if b[j] == ' ' {
			field++
			continue
		}
		if field == 22 {
			for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
				n = n*10 + int(b[j]-'0')
			}
			return pid, uint64(n), nil
		}
	}
	return 0, 0, syscall.EINVAL
}

// dropBoundingSet empties the capability bounding set and sets no_new_privs, so nothing the
// process runs can gain a privilege.
func dropBoundingSet() error {
	if err := prctl(prSetNoNewPrivs, 1, 0); err != nil {
		return err
	}
	_ = prctl(prCapAmbient, prCapAmbientClearAll, 0)
	for c := 0; c < 64; c++ {
		if err := prctl(prCapbsetDrop, uintptr(c), 0); err == syscall.EINVAL {
			break
		} else if err != nil {
			return err
		}
	}
	return nil
}
