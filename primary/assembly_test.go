package primary

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/primary/mcpbridge"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// assemblyConfig is a primary's configuration for a test of its assembly, in a state
// directory of the test's.
func assemblyConfig(t *testing.T) Config {
	return Config{StateDir: t.TempDir(), Shells: shellhost.Settings{AgentBinary: os.Args[0], Isolation: shellhost.IsolationConfig{Mode: shellhost.IsolationOff}}}
}

// loopbackListeners are listeners New can build on; the test closes them.
func loopbackListeners(t *testing.T) Listeners {
	t.Helper()
	var ls [4]net.Listener
	for i := range ls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		ls[i] = l
	}
	return Listeners{GRPC: ls[0], HTTP: ls[1], AgentCLI: ls[2], Metrics: ls[3]}
}

// TestShutdownOrderKeepsItsReasons: the order New's construction gives the shutdown keeps
// every constraint the shutdown has, each with its reason.
func TestShutdownOrderKeepsItsReasons(t *testing.T) {
	p, err := New(t.Context(), assemblyConfig(t), loopbackListeners(t))
	if err != nil {
		t.Fatal(err)
	}
	order := p.stops.Order()
	t.Cleanup(func() { _ = p.stops.Stop(context.Background()) })
	at := func(name string) int {
		i := slices.Index(order, name)
		if i < 0 {
			t.Fatalf("no stop named %q in %q", name, order)
		}
		return i
	}
	if order[0] != "readiness" {
		t.Errorf("first stop %q, want readiness: load balancers and workers look elsewhere before anything stops", order[0])
	}
	if last := order[len(order)-1]; last != "store" {
		t.Errorf("last stop %q, want the store: every server that could write has stopped", last)
	}
	for _, c := range []struct{ before, after, why string }{
		{"continuation subscriptions", "job supervision", "endless streams end before anything waits for requests"},
		{"operator event watches", "job supervision", "endless streams end before anything waits for requests"},
		{"thread feed subscriptions", "job supervision", "endless streams end before anything waits for requests"},
		{"thread feed subscriptions", "gRPC server", "endless streams end before the graceful stop waits for them"},
		{"job supervision", "responses", "no job is finished by the shutdown itself"},
		{"responses", "local shells", "each response releases its own sandbox"},
		{"responses", "REST listener", "closing responses ends their long polls, which the graceful stops would wait for"},
		{"responses", "Agent CLI listener", "closing responses ends their long polls, which the graceful stops would wait for"},
		{"responses", "gRPC server", "closing responses ends their long polls, which the graceful stops would wait for"},
		{"responses", "MCP servers", "no call is left running on the servers"},
		{"responses", "tool host streams", "their calls were cancelled while the hosts could hear it"},
		{"responses", "worker connections", "responses release their commands on the workers"},
		{"worker connections", "gRPC server", "worker connections are long streams GracefulStop would wait for"},
		{"tool host streams", "gRPC server", "tool host streams are long streams GracefulStop would wait for"},
		{"REST listener", "gRPC server", "REST requests finish through the gRPC server behind the gateway"},
		{"REST listener", "metrics listener", "the metrics listener answers /readyz 503 while the others stop"},
		{"Agent CLI listener", "metrics listener", "the metrics listener answers /readyz 503 while the others stop"},
		{"gRPC server", "metrics listener", "the metrics listener answers /readyz 503 while the others stop"},
	} {
		if at(c.before) > at(c.after) {
			t.Errorf("%s stops after %s; want before: %s", c.before, c.after, c.why)
		}
	}
	if t.Failed() {
		t.Logf("order: %q", order)
	}
}

// TestAFailedNewStopsWhatItBuilt: a primary that cannot be built (here an MCP server named as
// a built-in toolkit, found only once the store is open and the engines are built) leaves
// nothing open: no file of the store is held, and the store opens again.
func TestAFailedNewStopsWhatItBuilt(t *testing.T) {
	cfg := assemblyConfig(t)
	cfg.MCPServers = []mcpbridge.ServerConfig{{Name: "shell", Command: "/bin/true"}}
	_, err := New(t.Context(), cfg, loopbackListeners(t))
	if err == nil || !strings.HasPrefix(err.Error(), `MCP server "shell": `) {
		t.Fatalf("New: %v, want the MCP server's failure", err)
	}
	db := filepath.Join(cfg.StateDir, sqlite.FileName)
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the store was not opened before the failure, so the test shows nothing: %v", err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, db) {
			t.Errorf("fd %s still holds %s", fd.Name(), target)
		}
	}
	again, err := sqlite.Open(t.Context(), db, sqlite.Options{})
	if err != nil {
		t.Fatalf("the store does not open again: %v", err)
	}
	again.Close()
}
