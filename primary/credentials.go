package primary

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/turncli/turncli/internal/statedir"
	"github.com/turncli/turncli/primary/workerhub"
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
	if err := statedir.WriteFileAtomic(path, []byte(token+"\n")); err != nil {
		return "", false, err
	}
	return token, true, nil
}

// loadWorkerCredentials reads <StateDir>/credentials/workers/<key>.token for every key found
// there, creates files for configured keys that have none, and adds configured credentials.
func (p *Primary) loadWorkerCredentials() (*workerhub.Credentials, error) {
	creds := workerhub.NewCredentials()
	dir := filepath.Join(p.cfg.StateDir, "credentials", "workers")
	p.workerFiles = make(map[string]string)
	for _, key := range p.cfg.WorkerKeys {
		if !validWorkerKey(key) {
			return nil, fmt.Errorf("worker key %q: use 1..64 letters, digits, '.', '_' or '-'", key)
		}
		if _, _, err := loadOrCreateToken(filepath.Join(dir, key+".token")); err != nil {
			return nil, fmt.Errorf("worker credential for %s: %w", key, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".token")
		if !ok || !validWorkerKey(key) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		token, _, err := loadOrCreateToken(path)
		if err != nil {
			return nil, fmt.Errorf("worker credential %s: %w", path, err)
		}
		creds.Add(key, token)
		p.workerFiles[key] = path
		p.Secrets.Add(token)
	}
	mounted, err := readWorkerCredentialsDir(p.cfg.WorkerCredentialsDir)
	if err != nil {
		return nil, err
	}
	// Every source adds its credentials beside the others': none replaces another's.
	for _, configured := range []map[string]string{mounted, p.cfg.WorkerCredentials} {
		for key, token := range configured {
			creds.Add(key, token)
			p.Secrets.Add(token)
		}
	}
	return creds, nil
}

// readWorkerCredentialsDir reads the <key>.token files of dir (none when dir is empty), as a
// mounted Secret holds them: each a link to the current version, which is followed. It only
// reads: the directory may be read-only, and is not the primary's to fix.
func readWorkerCredentialsDir(dir string) (map[string]string, error) {
	out := make(map[string]string)
	if dir == "" {
		return out, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("worker credentials: %w", err)
	}
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".token")
		if !ok || !validWorkerKey(key) {
			continue // a Secret volume's ..data and timestamped directories among them
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("worker credentials: %w", err)
		}
		token := strings.TrimSpace(string(data))
		if token == "" {
			return nil, fmt.Errorf("worker credentials: %s is empty", filepath.Join(dir, e.Name()))
		}
		out[key] = token
	}
	return out, nil
}

var workerKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func validWorkerKey(key string) bool { return workerKeyPattern.MatchString(key) }
