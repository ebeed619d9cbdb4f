package shellhost

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/turncli/turncli/internal/sandbox"
)

// BindIsolationFlags binds c's fields to flags of fs, each with its MINDROOM_ variable as the
// default, so the primary and the worker take the same flags for the same rules.
func BindIsolationFlags(fs *flag.FlagSet, c *IsolationConfig) {
	def := sandbox.DefaultLimits
	fs.StringVar(&c.Mode, "isolation", envOr("MINDROOM_ISOLATION", IsolationAuto),
		"auto: every response's commands and every job in a sandbox of their own, each agent as its own user, where the host can make sandboxes (root); required: refuse to start where it cannot; off: all shells as one user (env MINDROOM_ISOLATION)")
	c.FirstID, c.IDCount = sandbox.DefaultFirstID, sandbox.DefaultIDCount
	fs.Func("agent-ids", fmt.Sprintf("FIRST-LAST: the user and group ids agents get, one each, recorded in <state-dir>/agent-ids (default %d-%d; env MINDROOM_AGENT_IDS)",
		sandbox.DefaultFirstID, sandbox.DefaultFirstID+sandbox.DefaultIDCount-1), func(s string) error { return c.parseIDs(s) })
	if v := os.Getenv("MINDROOM_AGENT_IDS"); v != "" {
		_ = c.parseIDs(v) // a bad value is reported by Build's range check
	}
	c.Limits = def
	fs.IntVar(&c.Limits.Processes, "sandbox-processes", def.Processes, "most processes and threads alive in one sandbox")
	fs.Func("sandbox-memory", "most memory one sandbox uses, its /tmp included, e.g. 2GiB (default "+sizeText(def.MemoryBytes)+")", sizeFlag(&c.Limits.MemoryBytes))
	fs.IntVar(&c.Limits.CPUWeight, "sandbox-cpu-weight", def.CPUWeight, "a sandbox's CPU share, 1-10000; 100 is an even share with the rest of the host")
	fs.Func("sandbox-file-size", "largest file a job may write (default "+sizeText(def.FileBytes)+")", sizeFlag(&c.Limits.FileBytes))
	fs.IntVar(&c.Limits.OpenFiles, "sandbox-open-files", def.OpenFiles, "most files and sockets each process of a sandbox holds open")
	fs.Func("sandbox-tmp-size", "size of a sandbox's private /tmp (default "+sizeText(def.TmpBytes)+")", sizeFlag(&c.Limits.TmpBytes))
	c.DiskReserve = DefaultDiskReserve
	fs.Func("disk-reserve", "refuse commands and jobs while the state directory's file system has less free space; 0 refuses nothing (default "+sizeText(DefaultDiskReserve)+")",
		func(s string) error {
			n, err := ParseSize(s)
			if n == 0 {
				n = -1 // zero in the config means the default
			}
			c.DiskReserve = n
			return err
		})
}

func (c *IsolationConfig) parseIDs(s string) error {
	a, b, ok := strings.Cut(s, "-")
	first, err1 := strconv.ParseUint(a, 10, 32)
	last, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || last < first {
		return fmt.Errorf("agent ids %q: use FIRST-LAST", s)
	}
	c.FirstID, c.IDCount = uint32(first), uint32(last-first+1)
	return nil
}

func sizeFlag(dst *int64) func(string) error {
	return func(s string) error {
		n, err := ParseSize(s)
		*dst = n
		return err
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// ParseSize reads a byte count: digits, optionally followed by KiB, MiB, GiB or TiB (or K, M,
// G, T, the same powers of 1024).
func ParseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}}
	num, shift := strings.TrimSpace(s), uint(0)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, shift = strings.TrimSpace(rest), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("size %q: use a whole number of bytes, KiB, MiB, GiB or TiB", s)
	}
	return n << shift, nil
}

func sizeText(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
