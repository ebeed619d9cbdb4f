package statedir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxPrivateFile bounds what ReadPrivate reads: endpoints.json and credential files are small,
// and a file named by a record must not make its reader read without end (/dev/zero).
const maxPrivateFile = 1 << 20

// ReadPrivate reads a file of a state directory that decides where a credential is sent, or
// holds one: endpoints.json and the credential files it names. It reads it only when the file
// and its directory belong to this process's user or to root and nobody else may write them,
// and the file is a regular file reached without a symbolic link. Otherwise any local user,
// an agent among them, could plant a .turncli/endpoints.json where an operator runs turncli and
// have the operator's credential sent to an address of its choosing.
func ReadPrivate(path string) ([]byte, error) {
	if err := checkDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("refusing %s: it is a symbolic link", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("refusing %s: not a regular file", path)
	}
	if err := trusted(path, info); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPrivateFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPrivateFile {
		return nil, fmt.Errorf("refusing %s: larger than %d bytes", path, maxPrivateFile)
	}
	return data, nil
}

// checkDir checks the directory path (followed if a link: what counts is where the files are)
// as ReadPrivate checks a file.
func checkDir(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("refusing %s: not a directory", path)
	}
	return trusted(path, info)
}

// trusted reports why info, of path, is not to be trusted: owned by a user other than this
// process's or root, or writable by its group or by others.
func trusted(path string, info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("refusing %s: its owner cannot be told", path)
	}
	if uid := int(st.Uid); uid != os.Geteuid() && uid != 0 {
		return fmt.Errorf("refusing %s: it belongs to uid %d, neither you nor root", path, uid)
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("refusing %s: others may write it (mode %04o)", path, info.Mode().Perm())
	}
	return nil
}
