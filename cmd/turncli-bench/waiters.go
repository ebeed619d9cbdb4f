package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// waitersCommand is the child-process role of measureWaits.
const waitersCommand = "waiters"

// waitersJob is what the harness sends the child on stdin.
type waitersJob struct {
	Origin   string     `json:"origin"`
	Wait     string     `json:"wait"`     // the ?wait= of every GET
	Parallel int        `json:"parallel"` // requests being connected and written at once
	Calls    []waitCall `json:"calls"`
}

type waitCall struct {
	Token  string `json:"token"`
	Window string `json:"window"`
	CallID string `json:"call_id"`
}

// waitersOutput is the child's last line on stdout.
type waitersOutput struct {
	Arrivals []int64 `json:"arrivals"` // Unix ns when each completed receipt had arrived
	Failures int     `json:"failures"`
	// CPUNanos is the child's CPU time from having written every request to the last answer.
	CPUNanos   int64  `json:"cpu_ns"`
	FirstError string `json:"first_error,omitempty"`
}

// waitersMain runs the long polls of a waitersJob, each on its own connection: it prints "sent"
// once every request is written, then one waitersOutput line when all have answered.
func waitersMain(stdin io.Reader, stdout, stderr io.Writer) int {
	var job waitersJob
	if err := json.NewDecoder(stdin).Decode(&job); err != nil {
		fmt.Fprintln(stderr, "turncli-bench waiters:", err)
		return 2
	}
	if _, err := raiseNoFile(); err != nil {
		fmt.Fprintln(stderr, "turncli-bench waiters:", err)
		return 1
	}
	// Keep-alive, as mindroom-agent is: the primary answers and keeps the connection.
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: len(job.Calls)}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var (
		slots   = make(chan struct{}, max(job.Parallel, 1)) // bounds connects in flight, so the accept queue never overflows
		written sync.WaitGroup
		done    sync.WaitGroup
		mu      sync.Mutex
		out     = waitersOutput{Arrivals: make([]int64, 0, len(job.Calls))}
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if out.Failures == 0 {
			out.FirstError = err.Error()
		}
		out.Failures++
	}
	for _, c := range job.Calls {
		written.Add(1)
		done.Add(1)
		slots <- struct{}{}
		go func() {
			defer done.Done()
			var once sync.Once
			wrote := func() { once.Do(func() { <-slots; written.Done() }) }
			defer wrote()
			trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote() }}
			req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet,
				job.Origin+"/api/agent-cli/calls/"+c.CallID+"?wait="+job.Wait, nil)
			if err != nil {
				fail(err)
				return
			}
			req.Header.Set("Authorization", "Bearer "+c.Token)
			req.Header.Set("X-MindRoom-Agent-CLI-Window", c.Window)
			resp, err := hc.Do(req)
			if err != nil {
				fail(err)
				return
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			at := time.Now().UnixNano()
			switch {
			case err != nil:
				fail(err)
			case resp.StatusCode != http.StatusOK || !isTerminal(body):
				fail(fmt.Errorf("HTTP %d: %s", resp.StatusCode, body))
			default:
				mu.Lock()
				out.Arrivals = append(out.Arrivals, at)
				mu.Unlock()
			}
		}()
	}
	written.Wait()
	cpuSent := processCPU()
	fmt.Fprintln(stdout, "sent")
	done.Wait()
	out.CPUNanos = int64(processCPU() - cpuSent)
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		fmt.Fprintln(stderr, "turncli-bench waiters:", err)
		return 1
	}
	return 0
}
