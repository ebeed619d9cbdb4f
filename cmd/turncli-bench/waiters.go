package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
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
	NoFile   uint64     `json:"nofile"`   // the RLIMIT_NOFILE soft limit to raise to
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
//
// Each wait is one goroutine on a plain TCP connection that writes the GET and reads the
// answer with http.ReadResponse: an HTTP/1.1 keep-alive client, as mindroom-agent is, without
// net/http's transport (two more goroutines per connection), so that the clients take as
// little as they can of the CPU the primary answers with.
func waitersMain(stdin io.Reader, stdout, stderr io.Writer) int {
	var job waitersJob
	if err := json.NewDecoder(stdin).Decode(&job); err != nil {
		fmt.Fprintln(stderr, "turncli-bench waiters:", err)
		return 2
	}
	if _, _, err := raiseNoFile(job.NoFile); err != nil {
		fmt.Fprintln(stderr, "turncli-bench waiters:", err)
		return 1
	}
	u, err := url.Parse(job.Origin)
	if err != nil {
		fmt.Fprintln(stderr, "turncli-bench waiters:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var (
		slots   = make(chan struct{}, max(job.Parallel, 1)) // bounds connects in flight, so the accept queue never overflows
		written sync.WaitGroup
		done    sync.WaitGroup
		mu      sync.Mutex
		out     = waitersOutput{Arrivals: make([]int64, 0, len(job.Calls))}
		idle    = make([]net.Conn, 0, len(job.Calls)) // referenced, so no finalizer closes them
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
			conn, at, err := longPoll(ctx, u.Host, c, job.Wait, wrote)
			if err != nil {
				fail(err)
				return
			}
			mu.Lock()
			out.Arrivals = append(out.Arrivals, at)
			idle = append(idle, conn)
			mu.Unlock()
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
	runtime.KeepAlive(idle)
	return 0
}

// longPoll connects to host, writes the call's long-poll GET, calls wrote, and returns when the
// terminal receipt has arrived (Unix ns) with the connection, which the caller keeps open, idle,
// as a keep-alive client leaves it, until the process exits.
func longPoll(ctx context.Context, host string, c waitCall, wait string, wrote func()) (net.Conn, int64, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, 0, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	req := "GET /api/agent-cli/calls/" + c.CallID + "?wait=" + wait + " HTTP/1.1\r\n" +
		"Host: " + host + "\r\n" +
		"Authorization: Bearer " + c.Token + "\r\n" +
		"X-MindRoom-Agent-CLI-Window: " + c.Window + "\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		conn.Close()
		return nil, 0, err
	}
	wrote()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		conn.Close()
		return nil, 0, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10+1))
	at := time.Now().UnixNano()
	switch {
	case err != nil:
		conn.Close()
		return nil, 0, err
	case resp.StatusCode != http.StatusOK || !isTerminal(body):
		conn.Close()
		return nil, 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
	}
	return conn, at, nil
}
