// Command turncli-bench is the performance harness behind `make bench`. It starts a primary and a
// worker inside its own process, on 127.0.0.1 and bufconn only, measures the Agent CLI paths, the
// runtime's RunBash and the primary's memory beside floors measured in the same run (minimal
// standard-library and gRPC programs doing the same transport work, from internal/benchfloor),
// and prints one table: each measure's median over repeated rounds, its floor, their ratio, the
// target and whether it was met. -smoke runs every measure briefly and judges nothing.
//
// `turncli-bench version` (or --version) prints the build.
//
// `turncli-bench waiters` is the load generator of the long-poll measure, which the harness
// starts as a child process so that the primary's RSS is not mixed with 20,000 clients'.
//
// docs/PERFORMANCE.md ("make bench") records a run and how to read it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/turncli/turncli/internal/buildinfo"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == waitersCommand {
		os.Exit(waitersMain(os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println(buildinfo.Read().Line("turncli-bench"))
		return
	}
	var cfg Config
	var showVersion bool
	flag.StringVar(&cfg.BinDir, "bin", "bin", "directory holding mindroom-agent and floorclient")
	flag.BoolVar(&cfg.Smoke, "smoke", false, "run every measure briefly and judge no target")
	flag.StringVar(&cfg.Only, "run", "", "run only measures whose key matches this regular expression (keys: -list)")
	flag.BoolVar(&cfg.List, "list", false, "list the measures' keys and exit")
	flag.IntVar(&cfg.Rounds, "rounds", 0, "rounds per timed measure (default 5, 1 with -smoke)")
	flag.StringVar(&cfg.Markdown, "markdown", "", "also write the table as markdown to this file (- for stdout)")
	flag.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the measures to this file")
	flag.StringVar(&cfg.MemProfile, "memprofile", "", "write heap profiles to this file (.<measure> at each memory peak, .waits.goroutines the goroutines with the waits parked, and an allocation profile at the end)")
	flag.BoolVar(&cfg.Check, "check", false, "exit 1 when a target is missed or a row is skipped")
	flag.BoolVar(&cfg.Verbose, "v", false, "print every round's values")
	flag.BoolVar(&showVersion, "version", false, "print the build (module version, revision, Go version) and exit")
	flag.Parse()
	if showVersion {
		fmt.Println(buildinfo.Read().Line("turncli-bench"))
		return
	}
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "turncli-bench: unexpected arguments:", flag.Args())
		os.Exit(2)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "turncli-bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, cfg, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
