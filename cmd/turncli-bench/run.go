package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// measure is one subject of the table; it may print several rows.
type measure struct {
	key string
	doc string
	run func(ctx context.Context, b *bench) ([]row, error)
}

// measures in the order they run: the long polls first, so the RSS they record starts from a
// fresh process; then the timed ones; then the ones that grow the heap.
var measures = []measure{
	{"waits", "concurrent long-poll waits on unfinished calls, released together", measureWaits},
	{"process", "mindroom-agent tools call as a whole process, primary-local and through a worker's sandbox proxy", measureProcess},
	{"poll", "a client that polls every 0.2 s instead of long-polling, calling a fast tool", measurePoll},
	{"bash", "RunBash of `true` through ResponseService, local and on a worker: sandboxed (first and later commands of a response) beside bash and bwrap, and with isolation off", measureBash},
	{"rest", "completed calls/s over REST, 64 keep-alive clients", measureREST},
	{"tracing", "the cost of tracing (OTLP to a receiver in this process) on the tools-call process and on REST throughput", measureTracing},
	{"grpc", "completed calls/s over gRPC as a worker's proxy reaches the primary, 64 concurrent callers", measureGRPC},
	{"receipt", "heap per retained receipt", measureReceiptHeap},
	{"idle", "heap per idle open response", measureIdleHeap},
	{"shells", "many agent shells at once, local and on two workers, each calling 20 tools the way agents do", measureShells},
	{"grant", "grant resolution with many live responses against a bare map of as many digests", measureGrant},
	{"fleet", "a fleet on this machine: a primary and 50 worker processes of 4 keys; placement, RunBash p99 against one worker, and a reconnect storm after the primary restarts", measureFleet},
	{"durable", "durable transitions per second (approval decide, job finish with continuation) on SQLite and PostgreSQL against a single-row insert on each", measureDurable},
}

// bench is what every measure gets: the configuration and a progress log.
type bench struct {
	cfg Config
	log io.Writer
}

func (b *bench) progress(format string, args ...any) {
	fmt.Fprintf(b.log, "turncli-bench: "+format+"\n", args...)
}

// heapProfile writes the live heap, after a collection, to <memprofile>.<name> when -memprofile
// is set: the memory measures call it at their peak.
func (b *bench) heapProfile(name string) {
	if b.cfg.MemProfile == "" {
		return
	}
	runtime.GC()
	if err := writeProfile(b.cfg.MemProfile+"."+name, "heap"); err != nil {
		b.progress("heap profile: %v", err)
	}
}

// goroutineProfile writes every goroutine's stack to <memprofile>.<name>.goroutines when
// -memprofile is set (`go tool pprof -traces` counts them per stack).
func (b *bench) goroutineProfile(name string) {
	if b.cfg.MemProfile == "" {
		return
	}
	if err := writeProfile(b.cfg.MemProfile+"."+name+".goroutines", "goroutine"); err != nil {
		b.progress("goroutine profile: %v", err)
	}
}

func writeProfile(path, name string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// run runs the selected measures and prints the table; it returns the exit code.
func run(ctx context.Context, cfg Config, stdout, stderr io.Writer) int {
	if cfg.List {
		for _, m := range measures {
			fmt.Fprintf(stdout, "%-8s %s\n", m.key, m.doc)
		}
		return 0
	}
	b := &bench{cfg: cfg, log: stderr}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			fmt.Fprintln(stderr, "turncli-bench:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "turncli-bench:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	machine := describeMachine()
	fmt.Fprint(stdout, machine)
	start := time.Now()
	var rows []row
	var loads []string
	failed := 0
	for _, m := range measures {
		if !cfg.only.MatchString(m.key) {
			continue
		}
		loads = append(loads, m.key+" "+strings.Fields(loadAverage())[0])
		b.progress("%s: %s", m.key, m.doc)
		t0 := time.Now()
		got, err := m.run(ctx, b)
		if err != nil {
			// The run goes on: one measure failing on a busy machine must not cost the
			// others' figures. The table shows the failure in its place; the exit code is 1.
			fmt.Fprintf(stderr, "turncli-bench: %s: %v\n", m.key, err)
			if ctx.Err() != nil {
				return 1 // interrupted: the rest would fail the same way
			}
			failed++
			rows = append(rows, failedRow(m, err))
			continue
		}
		b.progress("%s: done in %.1fs", m.key, time.Since(t0).Seconds())
		rows = append(rows, got...)
	}
	if cfg.MemProfile != "" {
		if err := writeProfile(cfg.MemProfile, "allocs"); err != nil {
			fmt.Fprintln(stderr, "turncli-bench: memprofile:", err)
		}
	}
	machine += fmt.Sprintf("elapsed: %.0fs; load after: %s\n", time.Since(start).Seconds(), loadAverage())
	machine += fmt.Sprintf("1-minute load at each measure's start: %s\n", strings.Join(loads, ", "))
	fmt.Fprint(stdout, machine[strings.Index(machine, "elapsed: "):]+"\n")
	printTable(stdout, rows, cfg.Smoke, cfg.Verbose)
	judged, met, skipped := summary(rows)
	if cfg.Smoke {
		fmt.Fprintln(stdout, "\nsmoke run: targets not judged")
	} else {
		fmt.Fprintf(stdout, "\n%d of %d targets met\n", met, judged)
	}
	if skipped > 0 {
		fmt.Fprintf(stdout, "%d rows SKIPPED (see their notes): their targets are not judged\n", skipped)
	}
	if cfg.Markdown != "" {
		if err := saveMarkdown(cfg.Markdown, machine, rows, cfg.Smoke, stdout); err != nil {
			fmt.Fprintln(stderr, "turncli-bench: markdown:", err)
			return 1
		}
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d measures FAILED (see their rows)\n", failed)
		return 1
	}
	if cfg.Check && !cfg.Smoke && (met < judged || skipped > 0) {
		return 1
	}
	return 0
}

// failedRow stands in the table for measure m, which stopped with err.
func failedRow(m measure, err error) row {
	return row{key: m.key, measure: m.key + ": " + m.doc, target: target{kind: completes, text: "completes"}, broken: err.Error()}
}

func saveMarkdown(path, machine string, rows []row, smoke bool, stdout io.Writer) error {
	var sb strings.Builder
	sb.WriteString("```\n" + machine + "```\n\n")
	writeMarkdown(&sb, rows, smoke)
	if path == "-" {
		_, err := io.WriteString(stdout, "\n"+sb.String())
		return err
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// describeMachine is the header of a run: the command, the CPU, the toolchain and the load.
func describeMachine() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "command: %s\n", strings.Join(os.Args, " "))
	fmt.Fprintf(&sb, "nproc:   %d (GOMAXPROCS %d)\n", runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(&sb, "cpu:     %s\n", cpuModel())
	fmt.Fprintf(&sb, "go:      %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if release, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		fmt.Fprintf(&sb, "kernel:  Linux %s\n", strings.TrimSpace(string(release)))
	}
	fmt.Fprintf(&sb, "load:    %s (before)\n", loadAverage())
	return sb.String()
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
