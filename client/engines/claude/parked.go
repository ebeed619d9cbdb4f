package claude

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/turncli/turncli/client/engines"
)

// The hook and Run are separate processes: the hook writes the tool use it deferred to
// parked.json in the job's engine home, and Run, once the CLI ended the run on it, reports
// it. Run removes the file before it starts the CLI, so what it reads is of this run.

// parkedFile is the file's name under the engine home.
const parkedFile = "parked.json"

func parkedPath(home string) string { return filepath.Join(home, parkedFile) }

// writeParked records the deferred tool use, replacing the file whole so Run never reads
// half of it.
func writeParked(home string, p engines.Parked) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(home, parkedFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), parkedPath(home))
}

// readParked reads what the hook deferred; ok is false when it deferred nothing.
func readParked(home string) (p engines.Parked, ok bool) {
	b, err := os.ReadFile(parkedPath(home))
	if err != nil || json.Unmarshal(b, &p) != nil || p.ToolUseID == "" {
		return engines.Parked{}, false
	}
	return p, true
}
