package statedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EndpointsFile is the name of the file, in the state directory, that says where a running
// primary serves.
const EndpointsFile = "endpoints.json"

// Endpoints describes where the primary serves, as written to endpoints.json.
type Endpoints struct {
	GRPC              string            `json:"grpc"`
	HTTP              string            `json:"http"`
	AgentCLI          string            `json:"agent_cli"`
	Metrics           string            `json:"metrics,omitempty"` // /metrics, /healthz and /readyz
	RuntimeTokenFile  string            `json:"runtime_token_file,omitempty"`
	OperatorTokenFile string            `json:"operator_token_file,omitempty"`
	WorkerTokenFiles  map[string]string `json:"worker_token_files,omitempty"`
	AgentCLIBin       string            `json:"agent_cli_bin"`
	// Workspaces holds the agents' workspaces; AgentBinary is the client agent_cli_bin/ runs.
	Workspaces  string `json:"workspaces"`
	AgentBinary string `json:"agent_binary"`
	// Isolated: local shells run in sandboxes, each agent as its own user.
	Isolated bool `json:"isolated"`
	PID      int  `json:"pid"`
}

// WriteEndpoints records ep in dir's endpoints.json, replacing the file in one rename so a
// reader never sees half of it.
func WriteEndpoints(dir string, ep Endpoints) error {
	data, err := json.MarshalIndent(ep, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, EndpointsFile), append(data, '\n'))
}

// RemoveEndpoints removes dir's endpoints.json when it is still the one the process pid
// recorded, so a primary stopping never deletes the record of another that started since.
func RemoveEndpoints(dir string, pid int) error {
	path := filepath.Join(dir, EndpointsFile)
	ep, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || ep.PID != pid {
		return nil // unreadable or another process's: not ours to remove
	}
	return os.Remove(path)
}

// Read returns the endpoints recorded in dir by the primary serving there. When none can be
// reached it says why in words a person can act on: no primary recorded any (a
// *NotRunningError with PID 0), or the recorded one is no longer running (its process is
// gone, or it no longer holds the directory's lock).
func Read(dir string) (Endpoints, error) {
	path := filepath.Join(dir, EndpointsFile)
	ep, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Endpoints{}, &NotRunningError{Dir: dir}
	}
	if err != nil {
		return Endpoints{}, err
	}
	if !running(dir, ep.PID) {
		return Endpoints{}, &NotRunningError{Dir: dir, PID: ep.PID}
	}
	return ep, nil
}

// NotRunningError says that no primary serves on a state directory.
type NotRunningError struct {
	Dir string
	// PID is the process endpoints.json recorded, which has stopped; zero when there is no
	// endpoints.json at all.
	PID int
}

func (e *NotRunningError) Error() string {
	path := filepath.Join(e.Dir, EndpointsFile)
	if e.PID == 0 {
		return fmt.Sprintf("no primary is serving on %s (there is no %s); start it with `make run` or `mindroom-primary --state-dir %s`", e.Dir, path, e.Dir)
	}
	return fmt.Sprintf("the primary recorded in %s (pid %d) is not running; start it with `make run` or `mindroom-primary --state-dir %s`", path, e.PID, e.Dir)
}

func readFile(path string) (Endpoints, error) {
	var ep Endpoints
	data, err := ReadPrivate(path)
	if err != nil {
		return ep, err
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &ep); err != nil {
		return ep, fmt.Errorf("%s: %w", path, err)
	}
	return ep, nil
}

// WriteFileAtomic writes data to path, mode 0600, through a private temporary file renamed
// over it, so a reader of the state directory sees the old file or the new, never a part.
func WriteFileAtomic(path string, data []byte) error {
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
