// Package credentials keeps the primary's credentials in its state directory: the runtime
// credential (credentials/runtime.token, created on first start) and the workers'
// credentials/workers/<key>.token files, read with those mounted or configured besides them,
// and the key that signs decision links (credentials/links.key).
// Every credential it loads becomes a live secret. It decides nothing: roleauth and workerhub
// compare what it loads.
package credentials

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/turncli/turncli/internal/cliflag"
	"github.com/turncli/turncli/internal/statedir"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/workerhub"
)

// Runtime returns the runtime credential: configured when set, else the one kept in
// <stateDir>/credentials/runtime.token (created on first start), whose path is file. The
// credential becomes a live secret of live.
func Runtime(stateDir, configured string, live *secrets.Registry) (token, file string, err error) {
	token = configured
	if token == "" {
		file = filepath.Join(stateDir, "credentials", "runtime.token")
		if token, _, err = LoadOrCreate(file); err != nil {
			return "", "", err
		}
	}
	live.Add(token)
	return token, file, nil
}

// LoadOrCreate returns the credential in path, creating it (mode 0600, in a 0700
// directory) when missing. created reports whether this call wrote it.
func LoadOrCreate(path string) (token string, created bool, err error) {
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

// Workers says where worker credentials come from besides <StateDir>/credentials/workers/.
type Workers struct {
	// Keys are keys to create a credential file for when none exists yet.
	Keys []string
	// Dir, when set, is a read-only directory of <key>.token files (a mounted Secret, say)
	// read at start in addition to the state directory's; nothing in it is created or changed.
	Dir string
	// Configured maps worker keys to credentials configured in addition to those found in
	// files.
	Configured map[string]string
}

// LoadWorkers reads <stateDir>/credentials/workers/<key>.token for every key found there,
// creates files for w.Keys that have none, and adds the credentials of w.Dir and w.Configured.
// files maps each key found in the state directory to its file. Every credential becomes a
// live secret of live.
func LoadWorkers(stateDir string, w Workers, live *secrets.Registry) (creds *workerhub.Credentials, files map[string]string, err error) {
	creds = workerhub.NewCredentials()
	dir := filepath.Join(stateDir, "credentials", "workers")
	files = make(map[string]string)
	for _, key := range w.Keys {
		if !ValidWorkerKey(key) {
			return nil, nil, fmt.Errorf("worker key %q: use 1..64 letters, digits, '.', '_' or '-'", key)
		}
		if _, _, err := LoadOrCreate(filepath.Join(dir, key+".token")); err != nil {
			return nil, nil, fmt.Errorf("worker credential for %s: %w", key, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".token")
		if !ok || !ValidWorkerKey(key) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		token, _, err := LoadOrCreate(path)
		if err != nil {
			return nil, nil, fmt.Errorf("worker credential %s: %w", path, err)
		}
		creds.Add(key, token)
		files[key] = path
		live.Add(token)
	}
	mounted, err := readWorkerCredentialsDir(w.Dir)
	if err != nil {
		return nil, nil, err
	}
	// Every source adds its credentials beside the others': none replaces another's.
	for _, configured := range []map[string]string{mounted, w.Configured} {
		for key, token := range configured {
			creds.Add(key, token)
			live.Add(token)
		}
	}
	return creds, files, nil
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
		if !ok || !ValidWorkerKey(key) {
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

// ValidWorkerKey says whether key may name a worker: 1 to 64 letters, digits, '.', '_' or
// '-', starting with a letter or digit (it is a file name under credentials/workers/).
func ValidWorkerKey(key string) bool { return workerKeyPattern.MatchString(key) }

// BindFlags binds the worker credentials' sources to fs, from the environment.
func (w *Workers) BindFlags(fs *flag.FlagSet) {
	w.Keys = cliflag.SplitList(os.Getenv("MINDROOM_WORKER_KEYS"))
	fs.Var(cliflag.List{Names: &w.Keys}, "worker-keys", "comma-separated worker `keys` to create credentials for under <state-dir>/credentials/workers/ (env MINDROOM_WORKER_KEYS)")
	fs.StringVar(&w.Dir, "worker-credentials-dir", os.Getenv("MINDROOM_WORKER_CREDENTIALS_DIR"), "read-only directory of <key>.token worker credentials, such as a mounted Secret, read besides <state-dir>/credentials/workers/ (env MINDROOM_WORKER_CREDENTIALS_DIR)")
}

// Validate reports keys no file could be named after.
func (w Workers) Validate() error {
	for _, key := range w.Keys {
		if !ValidWorkerKey(key) {
			return fmt.Errorf("worker key %q: use 1..64 letters, digits, '.', '_' or '-'", key)
		}
	}
	return nil
}
