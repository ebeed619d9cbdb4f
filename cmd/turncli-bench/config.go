package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// Config is one harness run.
type Config struct {
	BinDir     string
	Smoke      bool
	Only       string
	List       bool
	Rounds     int
	Markdown   string
	CPUProfile string
	MemProfile string
	Check      bool
	Verbose    bool

	// Filled by Validate.
	AgentBinary   string
	PrimaryBinary string // the fleet's
	WorkerBinary  string
	FloorClient   string
	PollClient    string
	Self          string // this executable, for the waiters child
	only          *regexp.Regexp
	scale         scale
}

// scale is how much work each measure does: the full run, or the seconds-long smoke run.
type scale struct {
	rounds         int           // rounds of each timed measure; the reported value is their median
	processRuns    int           // processes per round and path (agent CLI, RunBash)
	loadClients    int           // concurrent clients of the throughput measures
	loadWarmup     time.Duration // not counted: whole per side first, then split over the turns
	loadDuration   time.Duration // counted, per round and side, split over its turns (loadRounds)
	grantLive      int           // live responses of the large grant index
	grantSmall     int           // live responses of the small one
	grantOps       int           // resolutions per round
	idleResponses  int           // open responses for heap-per-response
	memRounds      int           // rounds of the memory measures
	receiptsPer    int           // receipts per response for heap-per-receipt
	receiptResps   int           // responses holding them
	waits          int           // concurrent long polls
	waitRounds     int
	shells         int           // concurrent agent shells of the load measure
	shellToolScale float64       // how long its slow tools take, as a share of 0.5–4 s
	shellRamp      time.Duration // over which its shells start
	durableOps     int           // transitions per round and store of the durable measure
	fleetWorkers   int           // worker processes of the fleet (besides the solo one)
	fleetResponses int           // commands run on the fleet, and as many on one worker
	fleetJobs      int           // background jobs running across the primary's restarts (at most 20: the primary's cap)
}

var (
	fullScale = scale{
		rounds: 5, processRuns: 40, loadClients: 64, loadWarmup: 500 * time.Millisecond, loadDuration: 3 * time.Second,
		grantLive: 100_000, grantSmall: 10, grantOps: 1 << 21, idleResponses: 10_000, memRounds: 3,
		receiptsPer: 1000, receiptResps: 10, waits: 20_000, waitRounds: 3, shells: 500, shellToolScale: 3, shellRamp: 10 * time.Second,
		durableOps: 500, fleetWorkers: 50, fleetResponses: 500, fleetJobs: 20,
	}
	smokeScale = scale{
		rounds: 1, processRuns: 3, loadClients: 64, loadWarmup: 50 * time.Millisecond, loadDuration: 200 * time.Millisecond,
		grantLive: 2000, grantSmall: 10, grantOps: 1 << 14, idleResponses: 500, memRounds: 1,
		receiptsPer: 250, receiptResps: 4, waits: 200, waitRounds: 1, shells: 12, shellToolScale: 0.02, shellRamp: 100 * time.Millisecond,
		durableOps: 20, fleetWorkers: 16, fleetResponses: 40, fleetJobs: 4,
	}
)

// Validate checks the flags, finds the binaries and fills the scale.
func (c *Config) Validate() error {
	c.scale = fullScale
	if c.Smoke {
		c.scale = smokeScale
	}
	if c.Rounds < 0 {
		return errors.New("-rounds must not be negative")
	}
	if c.Rounds > 0 {
		c.scale.rounds = c.Rounds
	}
	re, err := regexp.Compile(c.Only)
	if err != nil {
		return fmt.Errorf("-run: %w", err)
	}
	c.only = re
	if c.List {
		return nil
	}
	bin, err := filepath.Abs(c.BinDir)
	if err != nil {
		return err
	}
	c.AgentBinary = filepath.Join(bin, "mindroom-agent")
	c.PrimaryBinary = filepath.Join(bin, "mindroom-primary")
	c.WorkerBinary = filepath.Join(bin, "mindroom-worker")
	c.FloorClient = filepath.Join(bin, "floorclient")
	c.PollClient = filepath.Join(bin, "pollclient")
	for _, p := range []string{c.AgentBinary, c.PrimaryBinary, c.WorkerBinary, c.FloorClient, c.PollClient} {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return fmt.Errorf("%s is not an executable; build it first (make bench does: go build -o bin/ ./cmd/mindroom-agent ./cmd/mindroom-primary ./cmd/mindroom-worker ./internal/benchfloor/floorclient ./internal/benchfloor/pollclient)", p)
		}
	}
	if c.Self, err = os.Executable(); err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	return nil
}
