package sqlite

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OperatorsMarkerSuffix names the file beside the database that counts changes of operators.
const OperatorsMarkerSuffix = "-operators"

// changeCounter is a 64-bit counter in a file mapped shared by every process that has the
// database open, as SQLite's own -shm file is: an atomic add by one process is seen by the
// others' next load, with no system call on either side. The primary's authenticator loads it
// on every call to learn whether `mindroom-primary operators` changed the operators meanwhile.
type changeCounter struct {
	mu  sync.RWMutex // Close unmaps: no load or add may run then
	mem []byte       // nil once closed
}

// openChangeCounter maps the counter file at path, creating it (zero) when missing.
func openChangeCounter(path string) (*changeCounter, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: operators marker: %w", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("store: operators marker: %w", err)
	}
	if fi.Size() < 8 { // growing to 8 zero bytes; two processes doing it at once agree
		if err := f.Truncate(8); err != nil {
			return nil, fmt.Errorf("store: operators marker: %w", err)
		}
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, 8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("store: operators marker: %w", err)
	}
	return &changeCounter{mem: mem}, nil
}

// word is the counter; the mapping is page-aligned, so it is aligned for atomic access.
func (c *changeCounter) word() *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&c.mem[0])) }

// Add counts n changes.
func (c *changeCounter) Add(n uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.mem != nil {
		c.word().Add(n)
	}
}

// Load returns the count; zero once closed.
func (c *changeCounter) Load() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.mem == nil {
		return 0
	}
	return c.word().Load()
}

// Close unmaps the counter.
func (c *changeCounter) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mem == nil {
		return nil
	}
	err := unix.Munmap(c.mem)
	c.mem = nil
	return err
}
