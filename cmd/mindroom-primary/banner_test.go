package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/statedir"
	"github.com/turncli/turncli/internal/testpty"
)

func TestBanner(t *testing.T) {
	for _, tc := range []struct {
		name string
		ep   statedir.Endpoints
		want string
	}{
		{"WithMetricsAndTheFirstAdminsFile", statedir.Endpoints{GRPC: "127.0.0.1:7420", HTTP: "http://127.0.0.1:7421",
			AgentCLI: "http://127.0.0.1:7422", Metrics: "http://127.0.0.1:7423", OperatorTokenFile: "/s/credentials/operator-admin.token"}, `
mindroom-primary is serving.

  Dashboard  http://127.0.0.1:7421/ui/
  Sign in    with the first admin's credential: cat /s/credentials/operator-admin.token
  Metrics    http://127.0.0.1:7423/metrics (health: /healthz, /readyz)
  Agent CLI  http://127.0.0.1:7422
  gRPC       127.0.0.1:7420

In another terminal: mindroom-primary shell --state-dir .turncli (make shell). Ctrl-C stops the primary.

`},
		{"WithoutMetricsOrAFile", statedir.Endpoints{GRPC: "127.0.0.1:7420", HTTP: "https://10.0.0.2:7421", AgentCLI: "http://127.0.0.1:7422"}, `
mindroom-primary is serving.

  Dashboard  https://10.0.0.2:7421/ui/
  Sign in    with an operator's credential (mindroom-primary operators add NAME --role admin)
  Metrics    none (--metrics-listen 127.0.0.1:7423 serves them)
  Agent CLI  http://127.0.0.1:7422
  gRPC       127.0.0.1:7420

In another terminal: mindroom-primary shell --state-dir .turncli (make shell). Ctrl-C stops the primary.

`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := banner(tc.ep, ".turncli"); got != tc.want {
				t.Fatalf("banner:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// A primary started at a terminal prints the banner after its "primary serving" line, in
// text logs; the pure function above says what the banner holds.
func TestABannerFollowsTheServingLineOnATerminal(t *testing.T) {
	tty, control := openTerminal(t)
	state := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"--state-dir", state, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
			"--agent-cli-listen", "127.0.0.1:0", "--isolation", "off"}, strings.NewReader(""), io.Discard, tty)
	}()
	defer func() {
		go io.Copy(io.Discard, control) // the stopping primary's last lines must not block on a full terminal
		cancel()
		if code := <-exited; code != 0 {
			t.Errorf("run exited %d", code)
		}
	}()
	var seen []string
	for {
		line, err := control.ReadString('\n')
		if err != nil {
			t.Fatalf("%v after:\n%s", err, strings.Join(seen, ""))
		}
		seen = append(seen, line)
		if strings.Contains(line, "mindroom-primary is serving.") {
			break
		}
	}
	var serving bool
	for _, line := range seen {
		serving = serving || strings.Contains(line, `msg="primary serving"`)
	}
	if !serving {
		t.Fatalf("no text \"primary serving\" line before the banner:\n%s", strings.Join(seen, ""))
	}
	for _, want := range []string{"  Dashboard  http://127.0.0.1:", "  Sign in    with the first admin's credential: cat " + state + "/credentials/operator-admin.token"} {
		line, err := control.ReadString('\n')
		for err == nil && strings.TrimSpace(line) == "" {
			line, err = control.ReadString('\n')
		}
		if err != nil || !strings.HasPrefix(strings.TrimRight(line, "\r\n"), want) {
			t.Fatalf("banner line %q (%v), want it to start %q", line, err, want)
		}
	}
}

// openTerminal opens a pseudo-terminal: its replica side, what the primary's stderr is, and
// a reader of what appears on its controlling side.
func openTerminal(t *testing.T) (*os.File, *bufio.Reader) {
	t.Helper()
	tty, controller := testpty.Open(t)
	return tty, bufio.NewReader(controller)
}
