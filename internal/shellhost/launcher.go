package shellhost

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// launcher keeps agent_cli_bin/mindroom-agent: a directory (0755, owned by this process's user)
// holding only an executable script (0755) that runs the real client. Shells running as the shell
// user can run it but not change it or add to the directory. It is rewritten atomically (write, then rename)
// whenever it is missing, stale or not executable, and anything else in the directory is removed.
type launcher struct {
	dir    string
	target string
	args   []string

	mu sync.Mutex
	// verified is the state of the directory and the launcher when they were last found
	// correct. Change times cannot be set by a process, and any entry added, removed or
	// renamed in the directory changes its change time, so equal stamps mean nothing changed.
	verified stamps
}

// stamps identify the directory and the launcher by inode and change time.
type stamps struct {
	dirIno, fileIno     uint64
	dirCtime, fileCtime syscall.Timespec
	valid               bool
}

func current(dir, file string) (stamps, bool) {
	var d, f syscall.Stat_t
	if syscall.Lstat(dir, &d) != nil || syscall.Lstat(file, &f) != nil {
		return stamps{}, false
	}
	return stamps{dirIno: d.Ino, fileIno: f.Ino, dirCtime: d.Ctim, fileCtime: f.Ctim, valid: true}, true
}

// Name is the launcher's file name, the command agents type.
const Name = "mindroom-agent"

func (l *launcher) script() []byte {
	var b strings.Builder
	b.WriteString("#!/bin/sh\nexec ")
	b.WriteString(shellQuote(l.target))
	for _, a := range l.args {
		b.WriteString(" ")
		b.WriteString(shellQuote(a))
	}
	b.WriteString(" \"$@\"\n")
	return []byte(b.String())
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ensure makes the launcher current and the directory hold nothing else (the directory is
// first on every shell's PATH, so anything planted there would shadow real commands). It is
// cheap when nothing changed since it last verified them: two stats.
func (l *launcher) ensure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	want := l.script()
	path := filepath.Join(l.dir, Name)
	if now, ok := current(l.dir, path); ok && l.verified.valid && now == l.verified {
		return nil
	}
	l.verified = stamps{}
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() == 0o755 {
		if got, err := os.ReadFile(path); err == nil && bytes.Equal(got, want) && l.dirIsPrivate() && l.holdsOnlyLauncher() {
			l.verified, _ = current(l.dir, path)
			return nil
		}
	}
	// Never act through a link: if something other than a real directory stands at the
	// directory's path (a symlink planted by a shell), remove it and make a fresh directory.
	if fi, err := os.Lstat(l.dir); err == nil && !fi.IsDir() {
		if err := os.Remove(l.dir); err != nil {
			return fmt.Errorf("agent_cli_bin: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(l.dir), 0o711); err != nil {
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	if err := os.Mkdir(l.dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	if err := os.Chmod(l.dir, 0o755); err != nil {
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	if err := os.Lchown(l.dir, os.Geteuid(), os.Getegid()); err != nil { // in case another user made it
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	// Whatever stands at the launcher's own path is replaced, even a directory.
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := os.RemoveAll(path); err != nil {
			return fmt.Errorf("agent_cli_bin: %w", err)
		}
	}
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	for _, e := range entries {
		if e.Name() != Name {
			if err := os.RemoveAll(filepath.Join(l.dir, e.Name())); err != nil {
				return fmt.Errorf("agent_cli_bin: %w", err)
			}
		}
	}
	tmp, err := os.CreateTemp(l.dir, "."+Name+"-*")
	if err != nil {
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(want); err != nil {
		tmp.Close()
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("agent_cli_bin: %w", err)
	}
	l.verified, _ = current(l.dir, path)
	return nil
}

func (l *launcher) holdsOnlyLauncher() bool {
	entries, err := os.ReadDir(l.dir)
	return err == nil && len(entries) == 1 && entries[0].Name() == Name
}

// dirIsPrivate: only this process's user may change the directory.
func (l *launcher) dirIsPrivate() bool {
	var st syscall.Stat_t
	if syscall.Lstat(l.dir, &st) != nil {
		return false
	}
	return st.Mode&syscall.S_IFMT == syscall.S_IFDIR && st.Mode&0o7777 == 0o755 && int(st.Uid) == os.Geteuid()
}
