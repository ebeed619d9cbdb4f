package mountview

import (
	"errors"
	"strconv"
	"strings"
)

// View is what a sandbox's file system holds beyond the host's read-only tree.
type View struct {
	// Hide are absolute paths that appear as empty directories.
	Hide []string
	// Workspace is the one directory the shell may write besides its /tmp, bound at its own path.
	Workspace string
	// ReadOnly are files or directories under a hidden path that stay visible, read-only, at
	// their own paths (agent_cli_bin/ and the client binary its launcher runs).
	ReadOnly []string
	// TmpBytes bounds the private /tmp (and /dev/shm); zero means the kernel's default, half
	// of memory.
	TmpBytes int64
}

// The argument list a View travels in: flag-value pairs, closed by argsEnd.
const (
	argHide      = "--hide"
	argWorkspace = "--workspace"
	argReadOnly  = "--ro"
	argTmp       = "--tmp-bytes"
	argsEnd      = "--"
)

// Args encodes v for an init process's command line.
func (v View) Args() []string {
	var out []string
	for _, h := range v.Hide {
		out = append(out, argHide, h)
	}
	if v.Workspace != "" {
		out = append(out, argWorkspace, v.Workspace)
	}
	for _, r := range v.ReadOnly {
		out = append(out, argReadOnly, r)
	}
	if v.TmpBytes > 0 {
		out = append(out, argTmp, strconv.FormatInt(v.TmpBytes, 10))
	}
	return append(out, argsEnd)
}

// ParseArgs reads a View from the front of args and returns what follows it.
func ParseArgs(args []string) (View, []string, error) {
	var v View
	for len(args) > 0 {
		if args[0] == argsEnd {
			return v, args[1:], v.Validate()
		}
		if len(args) < 2 {
			break
		}
		flag, val := args[0], args[1]
		args = args[2:]
		switch flag {
		case argHide:
			v.Hide = append(v.Hide, val)
		case argWorkspace:
			v.Workspace = val
		case argReadOnly:
			v.ReadOnly = append(v.ReadOnly, val)
		case argTmp:
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 0 {
				return View{}, nil, errors.New("mountview: bad " + argTmp)
			}
			v.TmpBytes = n
		default:
			return View{}, nil, errors.New("mountview: unknown argument " + strconv.Quote(flag))
		}
	}
	return View{}, nil, errors.New("mountview: the view's arguments are not closed by " + argsEnd)
}

// Validate checks that every path is absolute and clean, and that nothing is hidden that the
// sandbox needs: the root, or a directory holding the system.
func (v View) Validate() error {
	paths := append(append([]string{v.Workspace}, v.Hide...), v.ReadOnly...)
	for i, p := range paths {
		if p == "" && i == 0 {
			continue // no workspace: nothing is writable but /tmp
		}
		if !clean(p) {
			return errors.New("mountview: " + strconv.Quote(p) + " is not an absolute, clean path")
		}
	}
	for _, h := range v.Hide {
		if h == "/" || systemDir(h) {
			return errors.New("mountview: hiding " + h + " would hide the system")
		}
	}
	return nil
}

// systemDir: a directory the sandbox builds itself or the programs it runs live in.
func systemDir(p string) bool {
	switch p {
	case "/proc", "/dev", "/tmp", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc":
		return true
	}
	return false
}

// clean reports whether p is absolute and clean: no empty, "." or ".." element, no trailing
// slash, no NUL. (path/filepath would say the same, but is initialised too late for the init.)
func clean(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, e := range strings.Split(p[1:], "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}
