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
	"syscall"
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
	err := ids.locked(func(*os.File) error { return nil })
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// locked runs f with the record open for appending, locked against every other process that
// shares it (a standby primary on the same state directory, say), and read up to its end.
func (ids *Identities) locked(f func(*os.File) error) error {
	file, err := os.OpenFile(ids.path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("agent ids: %w", err)
	}
	defer file.Close()
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("agent ids: lock %s: %w", ids.path, err)
	}
	if err := endLine(file); err != nil {
		return fmt.Errorf("agent ids: %s: %w", ids.path, err)
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil { // endLine's write moved the offset
		return fmt.Errorf("agent ids: %s: %w", ids.path, err)
	}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
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
		return fmt.Errorf("agent ids: %s: %w", ids.path, err)
	}
	return f(file)
}

// For is the agent's id (its uid and gid), given now if the agent has none. An id is given
// under the record's lock after reading what other processes gave, so two processes sharing
// the record never give one id to two agents.
func (ids *Identities) For(agent string) (uint32, error) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if id, ok := ids.byAgent[agent]; ok {
		return id, nil
	}
	var given uint32
	err := ids.locked(func(f *os.File) error {
		if id, ok := ids.byAgent[agent]; ok {
			given = id
			return nil
		}
		id := ids.first
		for ids.used[id] {
			if id == ids.last {
				return fmt.Errorf("agent ids: all %d ids of the range are given; widen it", ids.last-ids.first+1)
			}
			id++
		}
		if _, err := f.WriteString(strconv.FormatUint(uint64(id), 10) + " " + strconv.Quote(agent) + "\n"); err != nil {
			return fmt.Errorf("agent ids: record the id of %q: %w", agent, err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("agent ids: record the id of %q: %w", agent, err)
		}
		ids.byAgent[agent] = id
		ids.used[id] = true
		given = id
		return nil
	})
	return given, err
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
