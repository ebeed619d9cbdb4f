package shellhost

import (
	"path/filepath"
	"sync"
	"syscall"
)

// pathStamp is what a probe's outcome depends on in one path: which file it is, who may use it
// and how (owner, group, mode), and for a regular file its content (size and change time, which
// no process can set back). A directory's change time is left out: it moves with every entry
// added or removed in it, which a shell does all the time in its workspace and which decides
// nothing the probe checks.
type pathStamp struct {
	path     string
	dev, ino uint64
	mode     uint32
	uid, gid uint32
	size     int64
	ctime    syscall.Timespec
	missing  bool
}

// probeStamps are the stamps of everything a passed probe proved about an agent's shell: its
// workspace, agent_cli_bin/ and its launcher, the client binary (through any link), and every
// directory above them, which the shell's user must be able to pass.
type probeStamps []pathStamp

func (r *Runner) probeStamps(workspace string) probeStamps {
	paths := []string{r.launcher.dir, filepath.Join(r.launcher.dir, Name)}
	paths = append(paths, withAncestors(workspace)...)
	paths = append(paths, withAncestors(r.cfg.Settings.AgentBinary)...)
	if real, err := filepath.EvalSymlinks(r.cfg.Settings.AgentBinary); err == nil && real != r.cfg.Settings.AgentBinary {
		paths = append(paths, withAncestors(real)...)
	}
	out := make(probeStamps, len(paths))
	for i, p := range paths {
		out[i] = stampOf(p)
	}
	return out
}

func stampOf(path string) pathStamp {
	s := pathStamp{path: path}
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		s.missing = true
		return s
	}
	s.dev, s.ino, s.mode, s.uid, s.gid = st.Dev, st.Ino, st.Mode, st.Uid, st.Gid
	if st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		s.size, s.ctime = st.Size, st.Ctim
	}
	return s
}

// withAncestors is p and every directory above it, up to /.
func withAncestors(p string) []string {
	out := []string{p}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		out = append(out, d)
		if d == "/" || d == "." {
			return out
		}
	}
}

func (a probeStamps) equal(b probeStamps) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// maxProbed bounds the agents whose passed probes are remembered; past it they are forgotten
// together, and each agent's next preflight probes again.
const maxProbed = 4096

// probed remembers, per agent, the stamps taken before a probe of its shell that passed.
type probed struct {
	mu     sync.Mutex
	passed map[string]probeStamps
}

// stands reports whether a probe of agent passed while its stamps were now.
func (p *probed) stands(agent string, now probeStamps) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	then, ok := p.passed[agent]
	return ok && then.equal(now)
}

func (p *probed) remember(agent string, stamps probeStamps) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.passed == nil || len(p.passed) >= maxProbed {
		p.passed = map[string]probeStamps{}
	}
	p.passed[agent] = stamps
}

func (p *probed) forget(agent string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.passed, agent)
}
