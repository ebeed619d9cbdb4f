package shellhost

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/internal/sandbox/mountview"
	"github.com/turncli/turncli/internal/shellpriv"
)

// Isolation runs every agent as a user of its own and every response's commands in a sandbox of
// the response's own (internal/sandbox).
type Isolation struct {
	// Identities gives each agent its user.
	Identities *sandbox.Identities
	// Limits bound each sandbox.
	Limits sandbox.Limits
	// DiskReserve is the free space, in bytes, under which commands and jobs are refused on the
	// state directory's file system; zero refuses nothing.
	DiskReserve int64
}

// DefaultDiskReserve keeps room for the store's writes when a shell fills its disk.
const DefaultDiskReserve = 256 << 20

// userOf is the agent's user: its own when isolated, else the shell user.
func (r *Runner) userOf(agent string) (*shellpriv.User, error) {
	if r.cfg.Sandboxing == nil {
		return r.cfg.Settings.User, nil
	}
	id, err := r.cfg.Sandboxing.Identities.For(agent)
	if err != nil {
		return nil, err
	}
	return &shellpriv.User{Uid: id, Gid: id}, nil
}

// view is what a sandbox of the agent whose workspace this is shows.
func (r *Runner) view(workspace string) mountview.View {
	return SandboxView(r.cfg.StateDir, r.workspacesDir(), r.launcher.dir, r.cfg.Settings.AgentBinary, workspace, r.cfg.Sandboxing.Limits.TmpBytes)
}

// SandboxView is what a sandbox of the agent whose workspace is workspace shows: the state
// directory and the workspaces hidden, that one workspace writable, agent_cli_bin/ and the client
// binary it runs read-only. The one rule for every shell of an agent's, a command's, a job's or a
// person's trying the walkthrough (mindroom-primary shell).
func SandboxView(stateDir, workspacesDir, binDir, agentBinary, workspace string, tmpBytes int64) mountview.View {
	v := mountview.View{
		Hide:      []string{stateDir},
		Workspace: workspace,
		ReadOnly:  []string{binDir, agentBinary},
		TmpBytes:  tmpBytes,
	}
	if !under(workspacesDir, stateDir) {
		v.Hide = append(v.Hide, workspacesDir)
	}
	return v
}

func under(p, dir string) bool { return p == dir || len(p) > len(dir) && p[:len(dir)+1] == dir+"/" }

// ErrDiskReserve reports a file system with less free space than the reserve.
var ErrDiskReserve = errors.New("disk reserve reached")

// CheckDisk fails when the state directory's file system has less free space than the
// reserve: the store's writes are at risk. Commands and jobs are refused then, so a shell that
// filled the disk cannot take the store's writes with it, and readiness reports it. Workspaces
// on a file system of their own are not checked: filling it harms only the shells, which get
// "No space left on device" and can free it.
func (r *Runner) CheckDisk() error {
	if r.cfg.Sandboxing == nil || r.cfg.Sandboxing.DiskReserve <= 0 {
		return nil
	}
	for _, dir := range []string{r.cfg.StateDir} {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			return fmt.Errorf("free space of %s: %w", dir, err)
		}
		free := int64(st.Bavail) * st.Bsize
		if free < r.cfg.Sandboxing.DiskReserve {
			return fmt.Errorf("%w: the file system of %s has %d MiB free, under the reserve of %d MiB; free space there (a workspace there may have filled it; an operator must remove files, as commands are refused) and try again",
				ErrDiskReserve, dir, free>>20, r.cfg.Sandboxing.DiskReserve>>20)
		}
	}
	return nil
}

// WorkspacesDir holds the agents' workspaces.
func (r *Runner) WorkspacesDir() string { return r.workspacesDir() }

// AgentBinary is the client binary agent_cli_bin/'s launcher runs.
func (r *Runner) AgentBinary() string { return r.cfg.Settings.AgentBinary }

// ShellUser is the user shells and local jobs run as outside a sandbox; nil: this process's
// own.
func (r *Runner) ShellUser() *shellpriv.User { return r.cfg.Settings.User }

// Isolated reports whether shells run in sandboxes, each agent as its own user.
func (r *Runner) Isolated() bool { return r.cfg.Sandboxing != nil }

func (r *Runner) workspacesDir() string {
	if r.cfg.Settings.WorkspacesDir != "" {
		return r.cfg.Settings.WorkspacesDir
	}
	return filepath.Join(r.cfg.StateDir, "workspaces")
}

// Isolation modes.
const (
	// IsolationAuto isolates where the host can make sandboxes and says loudly where it cannot.
	IsolationAuto = "auto"
	// IsolationRequired refuses to start where the host cannot make sandboxes.
	IsolationRequired = "required"
	// IsolationOff runs every shell as the shell user, able to reach every other.
	IsolationOff = "off"
)

// IsolationConfig is the configuration of shells' isolation, the same for the primary's local
// shells and a worker's.
type IsolationConfig struct {
	// Mode is IsolationAuto (the default), IsolationRequired or IsolationOff.
	Mode string
	// FirstID and IDCount are the range of user and group ids agents get, one each.
	FirstID, IDCount uint32
	// Limits bound each sandbox (sandbox.DefaultLimits's fields where zero).
	Limits sandbox.Limits
	// DiskReserve is the free space under which commands and jobs are refused (bytes);
	// negative refuses nothing, zero means DefaultDiskReserve.
	DiskReserve int64
}

// IsolationStatus says what isolation shells get, for the start line and readiness.
type IsolationStatus struct {
	Isolated bool
	// Detail is one sentence: what isolates shells, or why nothing does.
	Detail string
}

// Build decides the isolation for a host whose state directory is stateDir: nil Isolation when
// shells run unisolated, with the status saying why.
func (c IsolationConfig) Build(stateDir string) (*Isolation, IsolationStatus, error) {
	switch c.Mode {
	case "", IsolationAuto, IsolationRequired:
	case IsolationOff:
		return nil, IsolationStatus{Detail: "shells are not isolated (isolation is off): every agent's shells run as the shell user and can see, signal and reach each other's processes and files"}, nil
	default:
		return nil, IsolationStatus{}, fmt.Errorf("isolation %q: use auto, required or off", c.Mode)
	}
	lim := c.Limits.OrDefaults()
	if err := lim.Validate(); err != nil {
		return nil, IsolationStatus{}, err
	}
	support := sandbox.Detect()
	if support.Namespaces {
		sandbox.Sweep()
	}
	if !support.Namespaces {
		if c.Mode == IsolationRequired {
			return nil, IsolationStatus{}, fmt.Errorf("isolation is required but %s", support.Reason)
		}
		return nil, IsolationStatus{Detail: "shells are NOT isolated from each other: " + support.Reason +
			"; every agent's shells run as the shell user and can see, signal and reach each other's processes and files"}, nil
	}
	first, count := c.FirstID, c.IDCount
	if first == 0 {
		first = sandbox.DefaultFirstID
	}
	if count == 0 {
		count = sandbox.DefaultIDCount
	}
	if err := os.MkdirAll(stateDir, 0o711); err != nil {
		return nil, IsolationStatus{}, err
	}
	ids, err := sandbox.OpenIdentities(filepath.Join(stateDir, "agent-ids"), first, count)
	if err != nil {
		return nil, IsolationStatus{}, err
	}
	reserve := c.DiskReserve
	if reserve == 0 {
		reserve = DefaultDiskReserve
	}
	return &Isolation{Identities: ids, Limits: lim, DiskReserve: max(reserve, 0)},
		IsolationStatus{Isolated: true, Detail: fmt.Sprintf(
			"every response's commands and every job run in a sandbox of their own (PID, mount and IPC namespaces), each agent as its own user (ids %d-%d); limits by %s",
			first, first+count-1, support.Limits)}, nil
}

// JobSandbox is the sandbox a background job of agent runs in, keyed by key (its status file's
// path); nil without isolation. It refuses when the disk reserve is reached.
func (r *Runner) JobSandbox(agent, workspace, key string) (*sandbox.Job, error) {
	if r.cfg.Sandboxing == nil {
		return nil, nil
	}
	if err := r.CheckDisk(); err != nil {
		return nil, err
	}
	id, err := r.cfg.Sandboxing.Identities.For(agent)
	if err != nil {
		return nil, err
	}
	return &sandbox.Job{View: r.view(workspace), Limits: r.cfg.Sandboxing.Limits, UID: id, GID: id, Key: key}, nil
}
