package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/internal/testmcp"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/mcpbridge"
)

// mcpRun is one Bash command of a response that ran a single mindroom-agent invocation.
type mcpRun struct {
	code     int32
	stdout   string
	receipts []*responsev1.Receipt
}

// mcpBash runs command as its own Bash command (its own window) in response id.
func mcpBash(t *testing.T, env *testenv.Env, id, bashCallID, command string) mcpRun {
	t.Helper()
	run := env.RunBash(t, id, bashCallID, command)
	return mcpRun{code: run.Result.GetExitCode(), stdout: run.Stdout, receipts: run.Result.GetReceipts()}
}

// mcpOnlyReceipt returns the single receipt of a run.
func mcpOnlyReceipt(t *testing.T, run mcpRun) *responsev1.Receipt {
	t.Helper()
	if len(run.receipts) != 1 {
		t.Fatalf("window receipts = %v (exit %d, stdout %q)", run.receipts, run.code, run.stdout)
	}
	return run.receipts[0]
}

// mcpExpectCompleted checks a call that completed with outcome want (canonical JSON).
func mcpExpectCompleted(t *testing.T, run mcpRun, want string) *responsev1.Receipt {
	t.Helper()
	r := mcpOnlyReceipt(t, run)
	if run.code != 0 || r.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED || r.GetOutcomeJson() != want {
		t.Errorf("exit %d, status %v, outcome %s; want completed with %s", run.code, r.GetStatus(), r.GetOutcomeJson(), want)
	}
	return r
}

// mcpExpectFailed checks a call that failed with an outcome containing every part, and that
// mindroom-agent printed the failed receipt and exited 1.
func mcpExpectFailed(t *testing.T, run mcpRun, parts ...string) {
	t.Helper()
	r := mcpOnlyReceipt(t, run)
	if run.code != 1 || r.GetStatus() != responsev1.CallStatus_CALL_STATUS_FAILED {
		t.Errorf("exit %d, status %v (outcome %s); want exit 1 and failed", run.code, r.GetStatus(), r.GetOutcomeJson())
	}
	if !strings.Contains(run.stdout, `"status":"failed"`) {
		t.Errorf("stdout is not the failed receipt: %q", run.stdout)
	}
	for _, p := range parts {
		if !strings.Contains(r.GetOutcomeJson(), p) {
			t.Errorf("outcome %s does not contain %q", r.GetOutcomeJson(), p)
		}
	}
}

// mcpPID reads {"pid":N} from an outcome.
func mcpPID(t *testing.T, outcome string) int {
	t.Helper()
	obj, err := canonjson.ParseObject([]byte(outcome))
	if err != nil {
		t.Fatalf("outcome %s: %v", outcome, err)
	}
	n, _ := obj["pid"].(canonjson.Number)
	pid, ok := n.Int64()
	if !ok || pid <= 0 {
		t.Fatalf("outcome %s has no pid", outcome)
	}
	return int(pid)
}

func TestMCPStdioServerIsMountedAsADeferredToolkit(t *testing.T) {
	bin := testmcp.Build(t)
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.MCPServers = []mcpbridge.ServerConfig{{
			Name: "srv", Description: "The test MCP server.", Command: bin, Args: []string{"-page-size", "4"},
		}}
	}))
	entry, ok := env.Primary.Internals().Registry.Lookup("srv")
	if !ok {
		t.Fatal("the MCP server is not registered")
	}
	id := env.Open(t)

	t.Run("DiscoveryShowsItDeferredWithoutStartingIt", func(t *testing.T) {
		run := mcpBash(t, env, id, "search", "mindroom-agent tools search 'test MCP'")
		if want := `{"items":[{"deferred":true,"description":"The test MCP server.` +
			" (not loaded yet: `mindroom-agent tools describe srv` loads it and names its functions)" + `","toolkit":"srv"}]}` + "\n"; run.code != 0 || run.stdout != want {
			t.Errorf("exit %d, stdout %q, want %q", run.code, run.stdout, want)
		}
		if entry.Loads() != 0 {
			t.Errorf("discovery loaded the MCP server")
		}
	})

	t.Run("DescribeLoadsEveryPageOfItsToolsOnce", func(t *testing.T) {
		run := mcpBash(t, env, id, "describe", "mindroom-agent tools describe srv.greet")
		if run.code != 0 {
			t.Fatalf("exit %d, stdout %q", run.code, run.stdout)
		}
		d, err := canonjson.ParseObject([]byte(strings.TrimSpace(run.stdout)))
		if err != nil {
			t.Fatal(err)
		}
		schema, _ := d["input_schema"].(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		if d["description"] != "Greet someone by name." || props["name"] == nil ||
			!canonjson.Equal(d["instructions"], []any{testmcp.Instructions}) {
			t.Errorf("describe = %s", run.stdout)
		}
		last := fmt.Sprintf("filler_%02d", testmcp.Fillers-1) // on the last tools/list page
		if run := mcpBash(t, env, id, "describe-last", "mindroom-agent tools describe srv "+last); run.code != 0 {
			t.Errorf("describe %s: exit %d, stdout %q", last, run.code, run.stdout)
		}
		if entry.Loads() != 1 {
			t.Errorf("loads = %d, want 1", entry.Loads())
		}
	})

	t.Run("CallsCompleteWithTheToolResults", func(t *testing.T) {
		mcpExpectCompleted(t, mcpBash(t, env, id, "greet", `mindroom-agent tools call srv.greet '{"name":"Ada"}'`), `"Hello, Ada!"`)
		mcpExpectCompleted(t, mcpBash(t, env, id, "add", `mindroom-agent tools call srv.add '{"a":2,"b":40}'`), `{"sum":42}`)
		mcpExpectCompleted(t, mcpBash(t, env, id, "multi", `mindroom-agent tools call srv.multi`), `["one","two"]`)
		r := mcpExpectCompleted(t, mcpBash(t, env, id, "media", `mindroom-agent tools call srv.media`),
			`["a pixel",{"attachment":0,"mime_type":"image/png","type":"image"},{"attachment":1,"mime_type":"audio/wav","type":"audio"}]`)
		if a := r.GetAttachmentsJson(); !strings.HasPrefix(a, `[{"kind":"image","mime_type":"image/png","size":70,"uri":"data:image/png;base64,iVBORw0KGgo`) ||
			!strings.Contains(a, `{"kind":"audio","mime_type":"audio/wav","size":4,"uri":"data:audio/wav;base64,UklGRg=="}`) {
			t.Errorf("attachments = %s", a)
		}
	})

	t.Run("ToolErrorIsAFailedReceiptWithItsText", func(t *testing.T) {
		run := mcpBash(t, env, id, "boom", `mindroom-agent tools call srv.boom`)
		mcpExpectFailed(t, run, `"boom: the tool failed on purpose"`)
	})

	t.Run("ArgumentsAreCheckedAgainstTheToolSchema", func(t *testing.T) {
		run := mcpBash(t, env, id, "bad-add", `mindroom-agent tools call srv.add '{"a":"two","b":1}'`)
		mcpExpectFailed(t, run, "Invalid tool arguments")
	})

	t.Run("CrashFailsThatCallAndTheNextCallRestartsTheServer", func(t *testing.T) {
		before := mcpPID(t, mcpOnlyReceipt(t, mcpBash(t, env, id, "pid-1", `mindroom-agent tools call srv.instance`)).GetOutcomeJson())
		mcpExpectFailed(t, mcpBash(t, env, id, "crash", `mindroom-agent tools call srv.crash`),
			`MCP server \"srv\" exited during the call (exit status 3); effects may have occurred`)
		after := mcpPID(t, mcpOnlyReceipt(t, mcpBash(t, env, id, "pid-2", `mindroom-agent tools call srv.instance`)).GetOutcomeJson())
		if after == before {
			t.Errorf("the server was not restarted (pid %d)", before)
		}
		mcpExpectCompleted(t, mcpBash(t, env, id, "greet-again", `mindroom-agent tools call srv.greet '{"name":"Bo"}'`), `"Hello, Bo!"`)
	})

	t.Run("CallInFlightWhenTheServerDiesFailsClearly", func(t *testing.T) {
		const sleeper = "6f1d2c3b-4a5e-4f60-8172-93a4b5c6d7e8"
		run := env.RunBash(t, id, "dying",
			`mindroom-agent tools call srv.sleep --call-id `+sleeper+` --timeout 0 >/dev/null`+"\n"+
				`mindroom-agent tools call srv.wait_sleeping '{"count":1}' >/dev/null`+"\n"+
				`mindroom-agent tools call srv.crash >/dev/null`+"\n"+
				`mindroom-agent calls wait `+sleeper)
		if code := run.Result.GetExitCode(); code != 1 || !strings.Contains(run.Stdout, `"status":"failed"`) ||
			!strings.Contains(run.Stdout, `exited during the call (exit status 3)`) {
			t.Errorf("calls wait: exit %d, stdout %q", code, run.Stdout)
		}
	})
}

// TestMCPServerWithBadToolsKeepsTheRest mounts a real server whose list has a tool named with a
// control character, schemas one level too deep and a name listed twice: the rest of its tools
// are described and called through mindroom-agent, and /metrics counts what was left out.
func TestMCPServerWithBadToolsKeepsTheRest(t *testing.T) {
	bin := testmcp.Build(t)
	depths := fmt.Sprintf("%d,%d", catalog.MaxSchemaDepth, catalog.MaxSchemaDepth+1)
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.MCPServers = []mcpbridge.ServerConfig{{Name: "srv", Command: bin, Args: []string{"-odd-tools", "-schema-depths", depths}}}
	}))
	id := env.Open(t)
	atBound := fmt.Sprintf("srv.depth_%d", catalog.MaxSchemaDepth)

	t.Run("ASchemaAtTheDepthBoundIsDescribedAndCalled", func(t *testing.T) {
		run := mcpBash(t, env, id, "describe-deep", "mindroom-agent tools describe "+atBound)
		if run.code != 0 {
			t.Fatalf("exit %d, stdout %q", run.code, run.stdout)
		}
		if _, err := canonjson.ParseObject([]byte(strings.TrimSpace(run.stdout))); err != nil {
			t.Errorf("describe result: %v", err)
		}
		mcpExpectCompleted(t, mcpBash(t, env, id, "call-deep", "mindroom-agent tools call "+atBound),
			fmt.Sprintf(`"depth_%d"`, catalog.MaxSchemaDepth))
	})

	t.Run("TheFirstGreetIsTheOneKept", func(t *testing.T) {
		run := mcpBash(t, env, id, "describe-greet", "mindroom-agent tools describe srv.greet")
		if run.code != 0 || !strings.Contains(run.stdout, `"description":"Greet someone by name."`) {
			t.Errorf("exit %d, stdout %q", run.code, run.stdout)
		}
		mcpExpectCompleted(t, mcpBash(t, env, id, "greet", `mindroom-agent tools call srv.greet '{"name":"Ada"}'`), `"Hello, Ada!"`)
	})

	t.Run("ABadToolIsUnknown", func(t *testing.T) {
		run := env.RunBash(t, id, "describe-too-deep", "mindroom-agent tools describe srv.too_deep")
		if code := run.Result.GetExitCode(); code == 0 || !strings.Contains(run.Stderr, `Unknown function "too_deep"`) {
			t.Errorf("exit %d, stdout %q, stderr %q", code, run.Stdout, run.Stderr)
		}
	})

	t.Run("MetricsCountTheToolsLeftOutByReason", func(t *testing.T) {
		s, _ := scrapeMetrics(t, env)
		for reason, want := range map[string]float64{"invalid_name": 1, "invalid_schema": 3, "duplicate": 1, "invalid": 0} {
			series := fmt.Sprintf(`turncli_mcp_server_tools_skipped{reason=%q,server="srv"}`, reason)
			if got, ok := s[series]; !ok || got != want {
				t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
			}
		}
	})
}

func TestMCPStreamableHTTPServerIsMountedOverLoopback(t *testing.T) {
	srv := testmcp.NewServer(testmcp.Options{PageSize: 4})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, nil))
	t.Cleanup(ts.Close) // after the primary (cleanups run last first): its sessions end first
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.MCPServers = []mcpbridge.ServerConfig{{Name: "web", URL: ts.URL + "/mcp"}}
	}))
	id := env.Open(t)
	mcpExpectCompleted(t, mcpBash(t, env, id, "greet", `mindroom-agent tools call web.greet '{"name":"Web"}'`), `"Hello, Web!"`)
	mcpExpectCompleted(t, mcpBash(t, env, id, "add", `mindroom-agent tools call web.add '{"a":1,"b":2}'`), `{"sum":3}`)
	mcpExpectFailed(t, mcpBash(t, env, id, "boom", `mindroom-agent tools call web.boom`), "boom: the tool failed on purpose")
}

func TestMCPPrimaryShutdownStopsTheServerProcesses(t *testing.T) {
	bin := testmcp.Build(t)
	var server, child int
	serverFD, childFD := -1, -1
	// Registered before the primary starts, so it runs after the primary has stopped.
	t.Cleanup(func() {
		if serverFD < 0 || childFD < 0 {
			return // the test failed before it saw both processes
		}
		defer unix.Close(serverFD)
		defer unix.Close(childFD)
		if !mcpExitsWithin(serverFD, 0) {
			t.Errorf("server %d outlived the primary", server)
		}
		// The child is not the primary's to reap: the primary killed it, the kernel ends it.
		if !mcpExitsWithin(childFD, 10*time.Second) {
			t.Errorf("the server's child %d outlived the primary", child)
		}
	})
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.MCPServers = []mcpbridge.ServerConfig{{Name: "srv", Command: bin}}
	}))
	id := env.Open(t)
	server = mcpPID(t, mcpOnlyReceipt(t, mcpBash(t, env, id, "pid", `mindroom-agent tools call srv.instance`)).GetOutcomeJson())
	child = mcpPID(t, mcpOnlyReceipt(t, mcpBash(t, env, id, "spawn", `mindroom-agent tools call srv.spawn`)).GetOutcomeJson())
	var err error
	if serverFD, err = unix.PidfdOpen(server, 0); err != nil {
		t.Fatalf("server %d is not running while the primary is: %v", server, err)
	}
	if childFD, err = unix.PidfdOpen(child, 0); err != nil {
		unix.Close(serverFD)
		serverFD = -1
		t.Fatalf("child %d is not running while the primary is: %v", child, err)
	}
}

// mcpExitsWithin reports whether the process behind pidfd fd exits within d (a pidfd becomes
// readable when its process exits, whoever its parent is).
func mcpExitsWithin(fd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n == 1
	}
}
