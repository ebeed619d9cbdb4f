package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Identities gives every agent a user and group of its own, from a range of ids no one else on
// the host uses, and records each durably the moment it is given: an agent's files stay its own
// across restarts. The record is an append-only file of "uid agent" lines, the agent quoted.
type Identities struct {
	path        string
	first, last uint32

	mu      sync.Mutex
	byAgent map[string]uint32
	used    map[uint32]bool
}

// DefaultFirstID and DefaultIDCount are the id range agents get when none is configured: above
// the ids distributions give people and services, and below the ranges container runtimes
// hand to user namespaces.
const (
	DefaultFirstID = 2_000_000
	DefaultIDCount = 100_000
)

// OpenIdentities reads the record at path (creating it) for ids first to first+count-1.
func OpenIdentities(path string, first, count uint32) (*Identities, error) {
	if first < 1000 || count == 0 || uint64(first)+uint64(count)-1 >= 1<<31 {
		return nil, errors.New("agent ids: the range must start at 1000 or above, hold at least one id and end below 2^31")
	}
	ids := &Identities{path: path, first: first, last: first + count - 1, byAgent: map[string]uint32{}, used: map[uint32]bool{}}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("agent ids: %w", err)
	}
	defer f.Close()
	if err := endLine(f); err != nil {
		return nil, fmt.Errorf("agent ids: %s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil { // endLine's write moved the offset
		return nil, fmt.Errorf("agent ids: %s: %w", path, err)
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		idText, quoted, ok := strings.Cut(sc.Text(), " ")
		id, err := strconv.ParseUint(idText, 10, 32)
		agent, qerr := strconv.Unquote(quoted)
		if !ok || err != nil || qerr != nil {
			// A line cut short by a crash while it was appended: its agent gets an id again.
			continue
		}
		ids.byAgent[agent] = uint32(id)
		ids.used[uint32(id)] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("agent ids: %s: %w", path, err)
	}
	return ids, nil
}

// For is the agent's id (its uid and gid), given now if the agent has none.
func (ids *Identities) For(agent string) (uint32, error) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if id, ok := ids.byAgent[agent]; ok {
		return id, nil
	}
	id := ids.first
	for ids.used[id] {
		if id == ids.last {
			return 0, fmt.Errorf("agent ids: all %d ids of the range are given; widen it", ids.last-ids.first+1)
		}
		id++
	}
	f, err := os.OpenFile(ids.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("agent ids: %w", err)
	}
	_, werr := f.WriteString(strconv.FormatUint(uint64(id), 10) + " " + strconv.Quote(agent) + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return 0, fmt.Errorf("agent ids: record the id of %q: %w", agent, err)
	}
	ids.byAgent[agent] = id
	ids.used[id] = true
	return id, nil
}

// endLine ends a last line cut short by a crash, so the next append starts a line of its own.
func endLine(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	if _, err := f.Write([]byte("\n")); err != nil {
		return err
	}
	return f.Sync()
}
