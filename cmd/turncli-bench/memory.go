package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// goMemory is a reading of this process's Go heap in use and goroutine stack memory in use
// (bytes) and of its number of goroutines.
type goMemory struct {
	heap, stacks, goroutines float64
}

// readGoMemory reads it after two full collections, so that what it counts is what the process
// holds, not garbage that happens not to have been collected yet (the previous measure's
// primary, the admission's requests).
func readGoMemory() goMemory {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return goMemory{heap: float64(ms.HeapInuse), stacks: float64(ms.StackInuse), goroutines: float64(runtime.NumGoroutine())}
}

func (m goMemory) minus(o goMemory) goMemory {
	return goMemory{heap: m.heap - o.heap, stacks: m.stacks - o.stacks, goroutines: m.goroutines - o.goroutines}
}

// per divides every figure by n.
func (m goMemory) per(n int) goMemory {
	d := float64(max(n, 1))
	return goMemory{heap: m.heap / d, stacks: m.stacks / d, goroutines: m.goroutines / d}
}

// total is heap and stacks together.
func (m goMemory) total() float64 { return m.heap + m.stacks }

// rssMiB is this process's resident set size (VmRSS) in MiB.
func rssMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
