package mcpbridge

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/testmcp"
	"github.com/turncli/turncli/primary/catalog"
)

// testLogger routes a toolkit's log to t.Log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// stdioConfig mounts the testmcp command as "srv".
func stdioConfig(args ...string) ServerConfig {
	return ServerConfig{Name: "srv", Command: serverBinary, Args: args}
}

// mount returns a toolkit for cfg, closed at cleanup.
func mount(t *testing.T, cfg ServerConfig, opts Options) *Toolkit {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = 500 * time.Millisecond
	}
	tk, err := New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tk.Close() })
	return tk
}

// call calls function with args and returns the outcome's canonical JSON or the error.
func call(t *testing.T, tk *Toolkit, function string, args map[string]any) (string, []catalog.Attachment, error) {
	t.Helper()
	res, err := tk.Call(context.Background(), catalog.Call{Toolkit: tk.Name(), Function: function, Arguments: args})
	if err != nil {
		return "", nil, err
	}
	b, err := canonjson.Marshal(res.Value)
	if err != nil {
		t.Fatalf("outcome of %s is not JSON: %v", function, err)
	}
	return string(b), res.Attachments, nil
}

func mustCall(t *testing.T, tk *Toolkit, function string, args map[string]any) string {
	t.Helper()
	out, _, err := call(t, tk, function, args)
	if err != nil {
		t.Fatalf("%s: %v", function, err)
	}
	return out
}

func expectFailure(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("call succeeded, want a failure containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("failure %q does not contain %q", err, p)
		}
	}
}

func TestMCPStdioServer(t *testing.T) {
	t.Run("LoadFollowsToolsListPaginationToTheLastPage", func(t *testing.T) {
		tk := mount(t, stdioConfig("-page-size", "3"), Options{})
		def, err := tk.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]catalog.Function{}
		for _, f := range def.Functions {
			names[f.Name] = f
		}
		for _, want := range []string{"greet", "add", "boom", "sleep", "crash", "filler_00", "filler_11"} {
			if _, ok := names[want]; !ok {
				t.Errorf("function %q is missing from %d functions", want, len(def.Functions))
			}
		}
		if _, ok := names["broken_schema"]; ok {
			t.Errorf("a tool whose schema cannot be compiled was not skipped")
		}
		if len(def.Functions) < 3*4 {
			t.Errorf("only %d functions: pagination stopped early", len(def.Functions))
		}
		greet := names["greet"]
		if greet.Description != "Greet someone by name." || !strings.Contains(string(greet.InputSchema), `"name"`) {
			t.Errorf("greet = %+v (schema %s)", greet, greet.InputSchema)
		}
		if len(def.Instructions) != 1 || def.Instructions[0] != testmcp.Instructions {
			t.Errorf("instructions = %q", def.Instructions)
		}
	})

	t.Run("LoadedDefinitionCompilesInTheCatalog", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{})
		reg := catalog.NewRegistry()
		if err := reg.Register(context.Background(), tk); err != nil {
			t.Fatal(err)
		}
		entry, _ := reg.Lookup("srv")
		if entry.Loads() != 0 {
			t.Fatalf("a deferred MCP toolkit was loaded at registration")
		}
		view := reg.Snapshot(nil)
		fn, err := view.Resolve(context.Background(), "srv", "add")
		if err != nil {
			t.Fatal(err)
		}
		if err := fn.Validate([]byte(`{"a":1,"b":"x"}`)); !errors.Is(err, catalog.ErrInvalidArguments) {
			t.Errorf("Validate(bad arguments) = %v, want invalid arguments", err)
		}
	})

	t.Run("CallResultsMapToOutcomes", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{})
		if got := mustCall(t, tk, "greet", map[string]any{"name": "Ada"}); got != `"Hello, Ada!"` {
			t.Errorf("greet = %s", got)
		}
		args, _ := canonjson.ParseObject([]byte(`{"a":2,"b":40}`)) // numbers as the dispatcher passes them
		if got := mustCall(t, tk, "add", args); got != `{"sum":42}` {
			t.Errorf("add = %s", got)
		}
		if got := mustCall(t, tk, "multi", nil); got != `["one","two"]` {
			t.Errorf("multi = %s", got)
		}
		got, attachments, err := call(t, tk, "media", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != `["a pixel",{"attachment":0,"mime_type":"image/png","type":"image"},{"attachment":1,"mime_type":"audio/wav","type":"audio"}]` {
			t.Errorf("media = %s", got)
		}
		if len(attachments) != 2 || !strings.HasPrefix(attachments[0].URI, "data:image/png;base64,iVBORw0KGgo") ||
			attachments[1].Kind != "audio" || attachments[1].MimeType != "audio/wav" {
			t.Errorf("attachments = %+v", attachments)
		}
	})

	t.Run("ToolErrorIsAFailedCallWithItsText", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{})
		_, _, err := call(t, tk, "boom", nil)
		if err == nil || err.Error() != "boom: the tool failed on purpose" {
			t.Fatalf("boom = %v", err)
		}
	})

	t.Run("UnknownToolIsRejectedByTheServer", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{})
		_, _, err := call(t, tk, "nope", nil)
		expectFailure(t, err, `MCP server "srv" rejected the call`, "nope")
		if got := mustCall(t, tk, "greet", map[string]any{"name": "B"}); got != `"Hello, B!"` {
			t.Errorf("the session did not survive a rejected call: %s", got)
		}
	})

	t.Run("ServerEnvironmentHoldsOnlyAllowedAndFixedVariables", func(t *testing.T) {
		primaryEnv := map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/home/primary", "ALLOWED": "yes", "SECRET": "s3cret"}
		cfg := stdioConfig()
		cfg.EnvAllow = []string{"ALLOWED"}
		cfg.Env = map[string]string{"FIXED": "v"}
		tk := mount(t, cfg, Options{LookupEnv: func(n string) (string, bool) { v, ok := primaryEnv[n]; return v, ok }})
		for name, want := range map[string]string{
			"ALLOWED": `{"set":true,"value":"yes"}`,
			"FIXED":   `{"set":true,"value":"v"}`,
			"HOME":    `{"set":true,"value":"/home/primary"}`,
			"SECRET":  `{"set":false,"value":""}`,
		} {
			if got := mustCall(t, tk, "env", map[string]any{"name": name}); got != want {
				t.Errorf("env %s = %s, want %s", name, got, want)
			}
		}
	})

	t.Run("WorkingDirectoryIsTheConfiguredOne", func(t *testing.T) {
		dir := t.TempDir()
		cfg := stdioConfig()
		cfg.Dir = dir
		tk := mount(t, cfg, Options{})
		pid := pidOf(t, mustCall(t, tk, "instance", nil))
		cwd, err := os.Readlink(filepath.Join("/proc", itoa(pid), "cwd"))
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := filepath.EvalSymlinks(dir); cwd != want {
			t.Errorf("server cwd = %q, want %q", cwd, want)
		}
	})

	t.Run("CrashFailsThatCallAndTheNextCallRestartsTheServer", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{})
		first := pidOf(t, mustCall(t, tk, "instance", nil))
		_, _, err := call(t, tk, "crash", nil)
		expectFailure(t, err, `MCP server "srv" exited during the call (exit status 3)`, "effects may have occurred", "started again on next use")
		second := pidOf(t, mustCall(t, tk, "instance", nil))
		if second == first {
			t.Errorf("the server was not restarted: pid %d both times", first)
		}
	})

	t.Run("InFlightCallsFailWhenTheServerDies", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{})
		errs := make(chan error, 2)
		for range 2 {
			go func() { _, _, err := call(t, tk, "sleep", nil); errs <- err }()
		}
		mustCall(t, tk, "wait_sleeping", map[string]any{"count": 2})
		_, _, err := call(t, tk, "crash", nil)
		expectFailure(t, err, "exited during the call")
		for range 2 {
			expectFailure(t, <-errs, `MCP server "srv" exited during the call (exit status 3)`, "effects may have occurred")
		}
	})

	t.Run("CallTimeoutFailsTheCallAndCancelsItOnTheServer", func(t *testing.T) {
		cfg := stdioConfig()
		cfg.CallTimeout = Duration(2 * time.Second) // a margin for loaded machines; the tool sleeps until cancelled
		tk := mount(t, cfg, Options{})
		pid := pidOf(t, mustCall(t, tk, "instance", nil))
		_, _, err := call(t, tk, "sleep", nil)
		expectFailure(t, err, `MCP server "srv" did not complete the call within 2s`)
		if !fault.Is(err, fault.DeadlineExceeded) {
			t.Errorf("timed-out call = %v, want a deadline fault", err)
		}
		if got := mustCall(t, tk, "wait_cancelled", map[string]any{"count": 1}); got != `{"count":1}` {
			t.Errorf("wait_cancelled = %s", got)
		}
		if again := pidOf(t, mustCall(t, tk, "instance", nil)); again != pid {
			t.Errorf("a timed-out call restarted the server (%d → %d)", pid, again)
		}
	})

	t.Run("HungCallTimesOutAloneAndTheNextCallOnTheSameServerSucceeds", func(t *testing.T) {
		const timeout = 2 * time.Second
		cfg := stdioConfig()
		cfg.CallTimeout = Duration(timeout)
		tk := mount(t, cfg, Options{})
		pid := pidOf(t, mustCall(t, tk, "instance", nil))
		type outcome struct {
			err     error
			elapsed time.Duration
		}
		hung := make(chan outcome, 1)
		go func() {
			start := time.Now()
			_, _, err := call(t, tk, "hang", nil) // ignores its cancellation: only the deadline ends it
			hung <- outcome{err, time.Since(start)}
		}()
		mustCall(t, tk, "wait_hanging", map[string]any{"count": 1})
		// While hang holds its call, other calls on the session go through.
		if got := mustCall(t, tk, "greet", map[string]any{"name": "during"}); got != `"Hello, during!"` {
			t.Errorf("greet while a call hangs = %s", got)
		}
		var o outcome
		select {
		case o = <-hung:
		case <-time.After(timeout + 60*time.Second): // a backstop: the call must end at its deadline
			t.Fatal("the hung call did not end at its deadline")
		}
		expectFailure(t, o.err, `MCP server "srv" did not complete the call within 2s`)
		if !fault.Is(o.err, fault.DeadlineExceeded) {
			t.Errorf("hung call = %v, want a deadline fault", o.err)
		}
		if o.elapsed < timeout {
			t.Errorf("the hung call failed after %s, before its deadline", o.elapsed)
		}
		if got := mustCall(t, tk, "greet", map[string]any{"name": "after"}); got != `"Hello, after!"` {
			t.Errorf("greet after the timeout = %s", got)
		}
		if again := pidOf(t, mustCall(t, tk, "instance", nil)); again != pid || tk.Restarts() != 0 {
			t.Errorf("a hung call restarted the server (%d → %d, %d restarts)", pid, again, tk.Restarts())
		}
	})

	t.Run("WedgedServerIsRestartedOnTheUseAfterItsPingGoesUnanswered", func(t *testing.T) {
		cfg := stdioConfig()
		cfg.CallTimeout = Duration(2 * time.Second)
		logger, logs := recordLogs(t)
		tk := mount(t, cfg, Options{Logger: logger, PingTimeout: 500 * time.Millisecond})
		pid := pidOf(t, mustCall(t, tk, "instance", nil))
		wedged := watchExit(t, pid)
		// A stopped process reads and answers nothing, like a server stuck in a call it
		// handles alone.
		if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		_, _, err := call(t, tk, "greet", map[string]any{"name": "x"})
		if !fault.Is(err, fault.DeadlineExceeded) {
			t.Fatalf("call to a wedged server = %v, want a deadline fault", err)
		}
		if !wedged.exitsWithin(60 * time.Second) { // a backstop: the unanswered ping stops it
			t.Fatalf("the wedged server %d was not stopped", pid)
		}
		if got := mustCall(t, tk, "greet", map[string]any{"name": "again"}); got != `"Hello, again!"` {
			t.Errorf("greet after the restart = %s", got)
		}
		if again := pidOf(t, mustCall(t, tk, "instance", nil)); again == pid || tk.Restarts() != 1 {
			t.Errorf("pid %d → %d, %d restarts; want a new server, started once more", pid, again, tk.Restarts())
		}
		if lines := logs.lines("MCP server unresponsive"); len(lines) != 1 {
			t.Errorf("logged %d unresponsive lines, want 1", len(lines))
		}
	})

	t.Run("CallersDeadlineBeforeTheCallTimeoutEndsTheCall", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{}) // the default call timeout: a minute
		mustCall(t, tk, "instance", nil)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := tk.Call(ctx, catalog.Call{Toolkit: tk.Name(), Function: "hang", Arguments: map[string]any{}})
			done <- err
		}()
		select {
		case err := <-done:
			if !fault.Is(err, fault.DeadlineExceeded) {
				t.Errorf("call past the caller's deadline = %v, want a deadline fault", err)
			}
		case <-time.After(DefaultCallTimeout / 2): // a backstop, well before the call timeout
			t.Fatal("the call outlived its caller's deadline")
		}
		mustCall(t, tk, "greet", map[string]any{"name": "after"})
	})

	t.Run("CancelledCallEndsWithItsContext", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := tk.Call(ctx, catalog.Call{Function: "sleep", Arguments: map[string]any{}})
			done <- err
		}()
		mustCall(t, tk, "wait_sleeping", map[string]any{"count": 1})
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call = %v, want context.Canceled", err)
		}
		mustCall(t, tk, "wait_cancelled", map[string]any{"count": 1})
	})

	t.Run("CrashLoopBacksOffInsteadOfSpinning", func(t *testing.T) {
		startLog := filepath.Join(t.TempDir(), "starts")
		clock := clocktest.NewFake(time.Unix(1_700_000_000, 0))
		tk := mount(t, stdioConfig("-exit-at-start", "-start-log", startLog), Options{Now: clock.Now, BackoffBase: time.Second, BackoffMax: 4 * time.Second})
		load := func() error { _, err := tk.Load(context.Background()); return err }
		expectFailure(t, load(), `MCP server "srv" could not be started`, "exit status 1")
		expectFailure(t, load(), "could not be started") // the first restart is immediate
		expectStarts(t, startLog, 2)
		expectFailure(t, load(), "unavailable after 2 consecutive failures", "exit status 1", "after 1s")
		expectStarts(t, startLog, 2)
		clock.Advance(time.Second)
		expectFailure(t, load(), "could not be started")
		expectStarts(t, startLog, 3)
		clock.Advance(2*time.Second - time.Millisecond)
		expectFailure(t, load(), "unavailable after 3 consecutive failures", "after 1ms")
		clock.Advance(time.Millisecond)
		expectFailure(t, load(), "could not be started")
		expectStarts(t, startLog, 4)
		clock.Advance(4 * time.Second)
		expectFailure(t, load(), "could not be started")
		expectFailure(t, load(), "after 4s") // capped at BackoffMax
		expectStarts(t, startLog, 5)
	})

	t.Run("ConcurrentUsesOfACrashingServerStartItAtMostTwice", func(t *testing.T) {
		startLog := filepath.Join(t.TempDir(), "starts")
		clock := clocktest.NewFake(time.Unix(1_700_000_000, 0))
		tk := mount(t, stdioConfig("-exit-at-start", "-start-log", startLog), Options{Now: clock.Now})
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() { _, _, err := call(t, tk, "greet", map[string]any{"name": "x"}); errs <- err })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			expectFailure(t, err, `MCP server "srv"`)
		}
		b, err := os.ReadFile(startLog)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n < 1 || n > 2 {
			t.Errorf("8 concurrent uses started the server %d times, want 1 or 2", n)
		}
	})

	t.Run("MissingCommandFailsTheLoadClearly", func(t *testing.T) {
		tk := mount(t, ServerConfig{Name: "srv", Command: filepath.Join(t.TempDir(), "absent")}, Options{})
		_, err := tk.Load(context.Background())
		expectFailure(t, err, `MCP server "srv" could not be started`, "no such file")
	})

	t.Run("CloseStopsTheServerAndItsChildren", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{})
		server := watchExit(t, pidOf(t, mustCall(t, tk, "instance", nil)))
		child := watchExit(t, pidOf(t, mustCall(t, tk, "spawn", nil)))
		if err := tk.Close(); err != nil {
			t.Fatal(err)
		}
		if !server.exitedNow() {
			t.Errorf("server %d was not reaped by Close", server.pid)
		}
		// The child is not ours to reap: Close killed it, and the kernel finishes that shortly.
		if !child.exitsWithin(10 * time.Second) {
			t.Errorf("child %d outlived Close", child.pid)
		}
		_, _, err := call(t, tk, "greet", map[string]any{"name": "x"})
		expectFailure(t, err, `MCP server "srv" is stopped`)
	})

	t.Run("CloseFailsCallsInFlight", func(t *testing.T) {
		tk := mount(t, stdioConfig(), Options{})
		done := make(chan error, 1)
		go func() { _, _, err := call(t, tk, "sleep", nil); done <- err }()
		mustCall(t, tk, "wait_sleeping", map[string]any{"count": 1})
		tk.Close()
		expectFailure(t, <-done, `MCP server "srv" is stopped`)
	})
}

func TestMCPStreamableHTTPServer(t *testing.T) {
	// The handler serves the current test server; restart replaces both and closes the old
	// server's sessions, as restarting a real server does.
	var mu sync.Mutex
	var srv *testmcp.Server
	var handler *mcp.StreamableHTTPHandler
	restart := func() {
		next := testmcp.NewServer(testmcp.Options{PageSize: 4})
		mu.Lock()
		old := srv
		srv, handler = next, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return next.Server }, nil)
		mu.Unlock()
		if old != nil {
			for ss := range old.Sessions() {
				ss.Close()
			}
		}
	}
	restart()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	t.Run("ToolsAreLoadedAndCalledOverLoopbackHTTP", func(t *testing.T) {
		tk := mount(t, ServerConfig{Name: "web", URL: ts.URL + "/mcp"}, Options{})
		def, err := tk.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(def.Functions) < testmcp.Fillers+5 {
			t.Errorf("%d functions: pagination stopped early", len(def.Functions))
		}
		if got := mustCall(t, tk, "greet", map[string]any{"name": "Web"}); got != `"Hello, Web!"` {
			t.Errorf("greet = %s", got)
		}
		if got := mustCall(t, tk, "add", map[string]any{"a": 1, "b": 2}); got != `{"sum":3}` {
			t.Errorf("add = %s", got)
		}
		_, _, err = call(t, tk, "boom", nil)
		expectFailure(t, err, "boom: the tool failed on purpose")
	})

	t.Run("LostSessionFailsOneCallAndTheNextReconnects", func(t *testing.T) {
		tk := mount(t, ServerConfig{Name: "web", URL: ts.URL + "/mcp"}, Options{})
		mustCall(t, tk, "greet", map[string]any{"name": "A"})
		restart()
		_, _, err := call(t, tk, "greet", map[string]any{"name": "B"})
		expectFailure(t, err, `MCP server "web" connection failed during the call`, "reconnected on next use")
		if got := mustCall(t, tk, "greet", map[string]any{"name": "C"}); got != `"Hello, C!"` {
			t.Errorf("greet after reconnect = %s", got)
		}
	})

	t.Run("TimedOutCallIsCancelledOnTheServer", func(t *testing.T) {
		tk := mount(t, ServerConfig{Name: "web", URL: ts.URL + "/mcp", CallTimeout: Duration(2 * time.Second)}, Options{})
		mustCall(t, tk, "greet", map[string]any{"name": "first"}) // connected before the clock matters
		_, _, err := call(t, tk, "sleep", nil)
		expectFailure(t, err, "did not complete the call within 2s")
		mustCall(t, tk, "greet", map[string]any{"name": "still here"})
	})

	t.Run("HungCallTimesOutAndTheNextCallSucceeds", func(t *testing.T) {
		mu.Lock()
		current := srv
		mu.Unlock()
		tk := mount(t, ServerConfig{Name: "web", URL: ts.URL + "/mcp", CallTimeout: Duration(2 * time.Second)}, Options{})
		t.Cleanup(current.Stop) // before the toolkit closes: the hang handler returns
		mustCall(t, tk, "greet", map[string]any{"name": "first"})
		_, _, err := call(t, tk, "hang", nil)
		expectFailure(t, err, "did not complete the call within 2s")
		if !fault.Is(err, fault.DeadlineExceeded) {
			t.Errorf("hung call = %v, want a deadline fault", err)
		}
		if got := mustCall(t, tk, "greet", map[string]any{"name": "after"}); got != `"Hello, after!"` {
			t.Errorf("greet after the timeout = %s", got)
		}
	})
}

func TestMCPConnectionsToNonLoopbackAddressesAreRefused(t *testing.T) {
	if err := loopbackOnly("tcp", "192.0.2.1:80", nil); err == nil {
		t.Error("a non-loopback address was accepted")
	}
	if err := loopbackOnly("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("loopback refused: %v", err)
	}
	if _, err := New(context.Background(), ServerConfig{Name: "x", URL: "http://192.0.2.1/mcp"}, Options{}); err == nil {
		t.Error("New accepted a non-loopback URL")
	}
}

func expectStarts(t *testing.T, path string, want int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "\n"); got != want {
		t.Errorf("server started %d times, want %d", got, want)
	}
}

func pidOf(t *testing.T, outcome string) int {
	t.Helper()
	obj, err := canonjson.ParseObject([]byte(outcome))
	if err != nil {
		t.Fatalf("outcome %s: %v", outcome, err)
	}
	n, ok := obj["pid"].(canonjson.Number)
	if !ok {
		t.Fatalf("outcome %s has no pid", outcome)
	}
	pid, ok := n.Int64()
	if !ok || pid <= 0 {
		t.Fatalf("outcome %s: bad pid", outcome)
	}
	return int(pid)
}

// exitWatch observes a process that is not necessarily our child through a pidfd, which
// becomes readable when the process exits.
type exitWatch struct {
	pid int
	fd  int
}

func watchExit(t *testing.T, pid int) exitWatch {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return exitWatch{pid: pid, fd: fd}
}

func (w exitWatch) exitedNow() bool { return w.exitsWithin(0) }

func (w exitWatch) exitsWithin(d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n == 1
	}
}

func itoa(n int) string {
	b, _ := canonjson.Marshal(n)
	return string(b)
}
