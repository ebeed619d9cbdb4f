package mountview

import (
	"errors"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// devices are the nodes of the sandbox's /dev, bound from the host's.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// Build turns the calling process's mount namespace into the view. The process must be alone in
// a new mount namespace and the first process of a new PID namespace (the fresh /proc is that
// namespace's), and hold CAP_SYS_ADMIN. Nothing it mounts propagates to the host.
func (v View) Build() error {
	if err := v.Validate(); err != nil {
		return err
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return wrap("make the mounts private", "/", err)
	}
	// Sources are held open before anything is covered: a bind names them by descriptor, through
	// the host's /proc, which is replaced last.
	binds, err := v.openBinds()
	if err != nil {
		return err
	}
	defer closeAll(binds)
	devs := openDevices()
	defer closeAll(devs)

	if err := setattrRecursive("/", mountAttrRdonly|mountAttrNosuid|mountAttrNodev); err != nil {
		return wrap("make the host's tree read-only", "/", err)
	}
	if err := mountTmp("/tmp", 0o1777, v.TmpBytes); err != nil {
		return err
	}
	if fi, err := os.Lstat("/var/tmp"); err == nil && fi.IsDir() {
		if err := syscall.Mount("/tmp", "/var/tmp", "", syscall.MS_BIND, ""); err != nil {
			return wrap("bind", "/var/tmp", err)
		}
	}
	masks, err := v.mask()
	if err != nil {
		return err
	}
	for _, b := range binds {
		if err := b.mount(); err != nil {
			return err
		}
	}
	for _, m := range masks {
		// The masks hold only the directories made for the binds; nothing is written there after.
		if err := syscall.Mount("", m, "", syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
			return wrap("make read-only", m, err)
		}
	}
	if err := buildDev(devs, v.TmpBytes); err != nil {
		return err
	}
	// The control groups name other sandboxes and how much they use; a shell needs none.
	if fi, err := os.Stat("/sys/fs/cgroup"); err == nil && fi.IsDir() {
		if err := syscall.Mount("tmpfs", "/sys/fs/cgroup", "tmpfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=0555,size=4k"); err != nil {
			return wrap("hide", "/sys/fs/cgroup", err)
		}
	}
	if err := syscall.Unmount("/proc", syscall.MNT_DETACH); err != nil {
		return wrap("unmount the host's", "/proc", err)
	}
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return wrap("mount", "/proc", err)
	}
	return nil
}

// bind is a file or directory bound at its own path, read-write or read-only.
type bind struct {
	path     string
	src      *os.File
	dir      bool
	writable bool
	device   bool // a device node, whose mount must allow devices
}

func (b *bind) Close() error { return b.src.Close() }

func (v View) openBinds() ([]*bind, error) {
	var out []*bind
	open := func(p string, writable bool) error {
		f, err := os.OpenFile(p, oPath|syscall.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		out = append(out, &bind{path: p, src: f, dir: fi.IsDir(), writable: writable})
		return nil
	}
	if v.Workspace != "" {
		if err := open(v.Workspace, true); err != nil {
			closeAll(out)
			return nil, err
		}
	}
	for _, p := range v.ReadOnly {
		if err := open(p, false); err != nil {
			closeAll(out)
			return nil, err
		}
	}
	return out, nil
}

// mask covers every hidden path, and every directory the shell could not pass through on the way
// to a bound path, with an empty tmpfs, outermost first, then makes the directories the binds
// need. Covering a directory the shell could not pass through hides nothing it could see. It
// returns the masks.
func (v View) mask() ([]string, error) {
	want := map[string]bool{}
	for _, h := range v.Hide {
		if _, err := os.Lstat(h); err != nil {
			continue // absent here already (it was under /tmp, say)
		}
		if m := closedAncestor(h); m != "" {
			want[m] = true
		} else {
			want[h] = true
		}
	}
	targets := v.bindTargets()
	for _, t := range targets {
		if m := closedAncestor(t); m != "" {
			want[m] = true
		}
	}
	var masks []string
	for m := range want {
		masks = append(masks, m)
	}
	sort.Strings(masks) // a parent sorts before its children
	var done []string
	for _, m := range masks {
		if under(m, done) {
			continue // covered by an outer mask: it no longer exists
		}
		if err := syscall.Mount("tmpfs", m, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
			return nil, wrap("hide", m, err)
		}
		done = append(done, m)
	}
	for _, h := range v.Hide {
		if under(h, done) {
			if err := os.MkdirAll(h, 0o755); err != nil {
				return nil, wrap("make", h, err)
			}
		}
	}
	return done, nil
}

// bindTargets are the paths the binds are mounted on.
func (v View) bindTargets() []string {
	var out []string
	if v.Workspace != "" {
		out = append(out, v.Workspace)
	}
	return append(out, v.ReadOnly...)
}

// closedAncestor is the outermost proper ancestor of p that others may not pass through, or "".
func closedAncestor(p string) string {
	parts := strings.Split(p, "/")[1:]
	cur := ""
	for _, part := range parts[:len(parts)-1] {
		cur += "/" + part
		fi, err := os.Stat(cur)
		if err != nil {
			return "" // missing from here down: made by the mask or the /tmp it is under
		}
		if fi.IsDir() && fi.Mode().Perm()&0o001 == 0 {
			return cur
		}
	}
	return ""
}

// under reports whether p is one of dirs or inside one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// mount binds b at its own path, creating the mount point where the path is missing (inside a
// mask or the private /tmp).
func (b *bind) mount() error {
	if _, err := os.Lstat(b.path); err != nil {
		if err := os.MkdirAll(parent(b.path), 0o755); err != nil {
			return wrap("make the mount point of", b.path, err)
		}
		if b.dir {
			err = os.Mkdir(b.path, 0o755)
		} else {
			var f *os.File
			if f, err = os.OpenFile(b.path, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				err = f.Close()
			}
		}
		if err != nil {
			return wrap("make the mount point of", b.path, err)
		}
	}
	if err := syscall.Mount(fdPath(b.src), b.path, "", syscall.MS_BIND, ""); err != nil {
		return wrap("bind", b.path, err)
	}
	flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_NOSUID)
	if !b.device {
		flags |= syscall.MS_NODEV
	}
	if !b.writable {
		flags |= syscall.MS_RDONLY
	}
	if err := syscall.Mount("", b.path, "", flags, ""); err != nil {
		return wrap("set the mount flags of", b.path, err)
	}
	return nil
}

func fdPath(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// openDevices holds the host's device nodes the sandbox's /dev binds; a missing one is left out.
func openDevices() []*bind {
	var out []*bind
	for _, name := range devices {
		f, err := os.OpenFile("/dev/"+name, oPath|syscall.O_CLOEXEC, 0)
		if err == nil {
			out = append(out, &bind{path: "/dev/" + name, src: f, writable: true, device: true})
		}
	}
	return out
}

// buildDev replaces /dev with a tmpfs holding the common device nodes, the standard stream
// links, a private pseudo-terminal instance and a private /dev/shm.
func buildDev(devs []*bind, tmpBytes int64) error {
	if err := syscall.Mount("tmpfs", "/dev", "tmpfs", syscall.MS_NOSUID|syscall.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return wrap("mount", "/dev", err)
	}
	for _, d := range devs {
		if err := d.mount(); err != nil {
			return err
		}
	}
	links := [][2]string{{"/proc/self/fd", "/dev/fd"}, {"/proc/self/fd/0", "/dev/stdin"},
		{"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"}, {"pts/ptmx", "/dev/ptmx"}}
	for _, l := range links {
		if err := os.Symlink(l[0], l[1]); err != nil {
			return wrap("link", l[1], err)
		}
	}
	if err := os.Mkdir("/dev/pts", 0o755); err != nil {
		return wrap("make", "/dev/pts", err)
	}
	if err := syscall.Mount("devpts", "/dev/pts", "devpts", syscall.MS_NOSUID|syscall.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return wrap("mount", "/dev/pts", err)
	}
	if err := os.Mkdir("/dev/shm", 0o755); err != nil {
		return wrap("make", "/dev/shm", err)
	}
	if err := mountTmp("/dev/shm", 0o1777, tmpBytes); err != nil {
		return err
	}
	if err := syscall.Mount("", "/dev", "", syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NOEXEC, ""); err != nil {
		return wrap("make read-only", "/dev", err)
	}
	return nil
}

func mountTmp(path string, mode os.FileMode, size int64) error {
	opts := "mode=" + strconv.FormatUint(uint64(mode), 8)
	if size > 0 {
		opts += ",size=" + strconv.FormatInt(size, 10)
	}
	if err := syscall.Mount("tmpfs", path, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		return wrap("mount", path, err)
	}
	return nil
}

func closeAll(bs []*bind) {
	for _, b := range bs {
		b.Close()
	}
}

// Error is a step of Build that failed.
type Error struct {
	Op, Path string
	Err      error
}

func (e *Error) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func wrap(op, path string, err error) error {
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	if en, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError("mount", en)
	}
	return &Error{Op: op, Path: path, Err: err}
}

// parent is the directory holding the absolute, clean path p.
func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}
