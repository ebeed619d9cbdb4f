package jobproc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat is what jobs need from /proc/<pid>/stat.
type procStat struct {
	state byte   // field 3: R, S, D, Z, …
	start uint64 // field 22: start time in clock ticks since boot
}

// errNoProcess: no process has the pid.
var errNoProcess = errors.New("no such process")

// readProcStat reads /proc/<pid>/stat.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return procStat{}, errNoProcess
	}
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(b))
}

// parseProcStat parses a stat line. The command name (field 2) is in parentheses and may hold
// spaces and parentheses itself, so fields are counted after its last ')'.
func parseProcStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("jobproc: malformed /proc stat")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("jobproc: malformed /proc stat")
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("jobproc: malformed /proc stat start time: %w", err)
	}
	return procStat{state: f[0][0], start: start}, nil
}

// StartTime returns the start time of the process pid (clock ticks since boot), which with the
// pid names one process for good.
func StartTime(pid int) (uint64, error) {
	st, err := readProcStat(pid)
	return st.start, err
}

// Alive reports whether pid is a live (not zombie) process started at start: the same process
// that was recorded, not a recycled pid.
func Alive(pid int, start uint64) bool {
	st, err := readProcStat(pid)
	return err == nil && st.start == start && st.state != 'Z' && st.state != 'X'
}

// signalGroup sends sig to the process group led by pid (a job is a session and group leader),
// but only while pid is still the process started at start. A group already gone is not an
// error.
func signalGroup(pid int, start uint64, sig syscall.Signal) error {
	if !Alive(pid, start) {
		return nil
	}
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
