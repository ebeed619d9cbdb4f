package shellhost

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/turncli/turncli/internal/shellpriv"
)

// prepareStateDir sets the modes that decide what shells reach in the state directory. The
// directory itself is 0711: the shell user may pass through it to its workspace and to
// agent_cli_bin/, but not list it. Everything else in it (the database, credentials, job records
// and logs) is made private to this process's user, directories 0700 and files 0600, fixing a
// state directory left by an older version or a careless copy.
func prepareStateDir(dir, workspacesDir string) error {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil { // MkdirAll keeps an existing directory's mode
		return fmt.Errorf("state dir: %w", err)
	}
	workspaces := workspacesDir
	if workspaces == "" {
		workspaces = filepath.Join(dir, "workspaces")
	}
	if err := os.MkdirAll(workspaces, 0o711); err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	if err := os.Chmod(workspaces, 0o711); err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	for _, e := range entries {
		switch e.Name() {
		case "workspaces", "agent_cli_bin": // the shells' part, kept by Workspace and the launcher
			continue
		}
		if err := makePrivate(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
	}
	return nil
}

// makePrivate removes group and other permissions under root; links are left alone (their
// modes mean nothing and their targets are not the state's).
func makePrivate(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return chmodIfNot(path, 0o700)
		case d.Type().IsRegular():
			return chmodIfNot(path, 0o600)
		}
		return nil
	})
}

func chmodIfNot(path string, mode fs.FileMode) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() == mode {
		return nil
	}
	return os.Chmod(path, mode)
}

// ownWorkspace gives the agent's workspace to the shell user. A workspace still owned by anyone
// else (created before shells ran as that user, or by hand) is handed over with everything in it;
// afterwards the check is one stat per command.
func ownWorkspace(dir string, u *shellpriv.User) error {
	if u == nil {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Uid == u.Uid && st.Gid == u.Gid {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// A file with other links may be another user's file linked in: its owner stays.
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			return err
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink > 1 {
			return nil
		}
		return os.Lchown(path, int(u.Uid), int(u.Gid))
	})
}
