package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Limits bound what one sandbox may take. A zero field means no limit of that kind.
type Limits struct {
	// Processes bounds the processes (and threads) alive in the sandbox at once.
	Processes int
	// MemoryBytes bounds the memory its processes use, its /tmp's pages included.
	MemoryBytes int64
	// CPUWeight is its share of CPU time against other sandboxes and the primary, 1 to 10000,
	// 100 being an even share (cgroup v2's cpu.weight).
	CPUWeight int
	// FileBytes bounds the size of any one file a job writes (RLIMIT_FSIZE).
	FileBytes int64
	// TmpBytes bounds its private /tmp and /dev/shm.
	TmpBytes int64
	// OpenFiles bounds the files and sockets each of its processes holds open (RLIMIT_NOFILE),
	// so a shell cannot hold thousands of connections to the host's services.
	OpenFiles int
}

// DefaultLimits are the limits of a sandbox when none are configured: enough for builds and
// test suites, small enough that a few runaway shells leave the host usable.
var DefaultLimits = Limits{
	Processes:   512,
	MemoryBytes: 2 << 30,
	CPUWeight:   100,
	FileBytes:   4 << 30,
	TmpBytes:    512 << 20,
	OpenFiles:   1024,
}

// OrDefaults is l with DefaultLimits's value in every field that is zero.
func (l Limits) OrDefaults() Limits {
	for _, f := range []struct{ v, def *int64 }{
		{&l.MemoryBytes, &DefaultLimits.MemoryBytes}, {&l.FileBytes, &DefaultLimits.FileBytes}, {&l.TmpBytes, &DefaultLimits.TmpBytes},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if l.Processes == 0 {
		l.Processes = DefaultLimits.Processes
	}
	if l.CPUWeight == 0 {
		l.CPUWeight = DefaultLimits.CPUWeight
	}
	if l.OpenFiles == 0 {
		l.OpenFiles = DefaultLimits.OpenFiles
	}
	return l
}

// Validate checks the ranges.
func (l Limits) Validate() error {
	switch {
	case l.Processes < 0, l.MemoryBytes < 0, l.FileBytes < 0, l.TmpBytes < 0, l.OpenFiles < 0:
		return errors.New("sandbox limits: no limit may be negative")
	case l.Processes != 0 && l.Processes < 8:
		return errors.New("sandbox limits: processes must be at least 8 (a shell and a pipeline)")
	case l.MemoryBytes != 0 && l.MemoryBytes < 16<<20:
		return errors.New("sandbox limits: memory must be at least 16 MiB")
	case l.OpenFiles != 0 && l.OpenFiles < 64:
		return errors.New("sandbox limits: open files must be at least 64")
	case l.CPUWeight < 0 || l.CPUWeight > 10000:
		return errors.New("sandbox limits: CPU weight must be between 1 and 10000")
	}
	return nil
}

// Events counts limits reached.
type Events struct {
	// ProcessLimit counts forks refused at the process limit.
	ProcessLimit uint64
	// OOMKills counts processes the kernel killed at the memory limit.
	OOMKills uint64
}

// Since is what happened after before.
func (e Events) Since(before Events) Events {
	return Events{ProcessLimit: e.ProcessLimit - before.ProcessLimit, OOMKills: e.OOMKills - before.OOMKills}
}

// Explain says in a line per limit reached what happened, for the command's own stderr; empty
// when nothing was reached.
func (e Events) Explain(l Limits) string {
	var b strings.Builder
	if e.ProcessLimit > 0 {
		fmt.Fprintf(&b, "turncli: the sandbox's process limit (%d) was reached: %d fork(s) failed\n", l.Processes, e.ProcessLimit)
	}
	if e.OOMKills > 0 {
		fmt.Fprintf(&b, "turncli: the sandbox's memory limit (%s) was reached: the kernel killed %d process(es)\n", bytesText(l.MemoryBytes), e.OOMKills)
	}
	return b.String()
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
