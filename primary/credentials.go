package primary

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// loadOrCreateToken returns the credential in path, creating it (mode 0600, in a 0700
// directory) when missing. created reports whether this call wrote it.
func loadOrCreateToken(path string) (token string, created bool, err error) {
	data, err := os.ReadFile(path)
	if err == nil {
		token = strings.TrimSpace(string(data))
		if token == "" {
			return "", false, fmt.Errorf("credential file %s is empty", path)
		}
		return token, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	token = base64.RawURLEncoding.EncodeToString(raw[:])
	if err := writeFileAtomic(path, []byte(token+"\n")); err != nil {
		return "", false, err
	}
	return token, true, nil
}

// writeFileAtomic writes data with mode 0600 through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
