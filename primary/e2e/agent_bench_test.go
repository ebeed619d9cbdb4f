package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// Benchmarks of one `mindroom-agent tools call` as a whole process (start, POST, long-poll GET,
// print, exit) against a primary-local listener, and of the floor: a minimal standard-library
// program making the same two loopback requests to a trivial server. Both report the median
// wall time of one process as median-ns/op next to the mean (ns/op). scripts/bench-agent-cli.sh
// runs them and docs/PERFORMANCE.md records the numbers.

// BenchmarkToolsCallEcho runs `mindroom-agent tools call test.echo '{}'` b.N times in a window of
// a primary-local response, with only the three Agent CLI variables in its environment.
func BenchmarkToolsCallEcho(b *testing.B) {
	env := testenv.Start(b)
	var procEnv []string
	window := func() {
		id := env.Open(b)
		w, err := env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: id, BashCallId: "bench"})
		if err != nil {
			b.Fatalf("OpenWindow: %v", err)
		}
		vars := w.GetEnvironment()
		procEnv = nil
		for _, k := range []string{"MINDROOM_AGENT_CLI_URL", "MINDROOM_AGENT_CLI_TOKEN", "MINDROOM_AGENT_CLI_WINDOW"} {
			procEnv = append(procEnv, k+"="+vars[k])
		}
	}
	benchProcess(b, func(i int) *exec.Cmd {
		if i%1000 == 0 { // a response holds at most 1024 receipts
			b.StopTimer()
			window()
			b.StartTimer()
		}
		cmd := exec.Command(env.AgentBinary, "tools", "call", "test.echo", "{}")
		cmd.Env = procEnv
		return cmd
	}, []byte(`"status":"completed"`))
}

// BenchmarkFloorTwoRequests runs internal/benchfloor/floorclient b.N times against trivialServer.
func BenchmarkFloorTwoRequests(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "floorclient")
	build := exec.Command("go", "build", "-o", bin, "github.com/turncli/turncli/internal/benchfloor/floorclient")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // built like testenv builds mindroom-agent
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build floorclient: %v\n%s", err, out)
	}
	url := trivialServer(b)
	benchProcess(b, func(int) *exec.Cmd {
		cmd := exec.Command(bin)
		cmd.Env = []string{"FLOOR_URL=" + url}
		return cmd
	}, []byte(`"status":"completed"`))
}

// BenchmarkToolsCallEchoTrivialServer runs the same mindroom-agent command as
// BenchmarkToolsCallEcho against trivialServer instead of the primary: it splits the distance
// to the floor into the client's part and the primary's part.
func BenchmarkToolsCallEchoTrivialServer(b *testing.B) {
	bin := testenv.AgentBinary(b)
	url := trivialServer(b)
	benchProcess(b, func(int) *exec.Cmd {
		cmd := exec.Command(bin, "tools", "call", "test.echo", "{}")
		cmd.Env = []string{"MINDROOM_AGENT_CLI_URL=" + url, "MINDROOM_AGENT_CLI_TOKEN=floor", "MINDROOM_AGENT_CLI_WINDOW=floor"}
		return cmd
	}, []byte(`"status":"completed"`))
}

// trivialServer answers every POST with a fixed queued receipt and every GET with the same
// receipt completed, at once; it returns its origin.
func trivialServer(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		status := "queued"
		if r.Method == http.MethodGet {
			status = "completed"
		}
		io.WriteString(w, receiptLine(agentCallA, "echo", "{}", "bench", status))
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// benchProcess runs the command next(i) builds b.N times, checks each printed want and exited 0,
// and reports the median wall time of one run.
func benchProcess(b *testing.B, next func(i int) *exec.Cmd, want []byte) {
	walls := make([]time.Duration, 0, b.N)
	var out bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := next(i)
		out.Reset()
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		walls = append(walls, time.Since(start))
		if err != nil || !bytes.Contains(out.Bytes(), want) {
			b.Fatalf("run %d: %v\n%s", i, err, out.Bytes())
		}
	}
	b.StopTimer()
	slices.Sort(walls)
	b.ReportMetric(float64(walls[len(walls)/2].Nanoseconds()), "median-ns/op")
}
