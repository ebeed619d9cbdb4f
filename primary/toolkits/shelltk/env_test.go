package shelltk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
)

// nestedRun is one RunNested call seen by testShell.
type nestedRun struct {
	command  string
	returned chan struct{} // closed when RunNested has returned
	result   bashexec.Result
	err      error
}

// testShell is a catalog.ShellRunner that really runs Bash through bashexec, in a temporary
// directory with a fixed environment, and lets tests see each run start and return.
type testShell struct {
	dir     string
	started chan *nestedRun

	mu  sync.Mutex
	all []*nestedRun
}

func (s *testShell) RunNested(ctx context.Context, command string, timeout time.Duration, out bashexec.Output) (bashexec.Result, error) {
	r := &nestedRun{command: command, returned: make(chan struct{})}
	s.mu.Lock()
	s.all = append(s.all, r)
	s.mu.Unlock()
	s.started <- r // buffered: tests that care receive, the others never fill it
	r.result, r.err = bashexec.Run(ctx, bashexec.Spec{
		Script:  command,
		Env:     []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"},
		Dir:     s.dir,
		Timeout: timeout,
		Grace:   2 * time.Second,
	}, out)
	close(r.returned)
	return r.result, r.err
}

// waitAll waits until every run has returned.
func (s *testShell) waitAll() {
	s.mu.Lock()
	all := append([]*nestedRun(nil), s.all...)
	s.mu.Unlock()
	for _, r := range all {
		<-r.returned
	}
}

// failingShell is a catalog.ShellRunner whose commands never start.
type failingShell struct{}

func (failingShell) RunNested(context.Context, string, time.Duration, bashexec.Output) (bashexec.Result, error) {
	return bashexec.Result{}, errors.New("window has ended")
}

// env is one toolkit with a real shell runner.
type env struct {
	tk    *Toolkit
	shell *testShell
	ups   int // fifos made by backgroundRunning
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	e := &env{tk: New(opts), shell: &testShell{dir: t.TempDir(), started: make(chan *nestedRun, 64)}}
	t.Cleanup(e.shell.waitAll)
	return e
}

// response is one response's identity and Lifetime.
type response struct {
	id       string
	lifetime context.Context
	end      context.CancelFunc
}

// newResponse returns a response whose Lifetime ends when the test does, before the shell's
// runs are awaited.
func newResponse(t *testing.T, id string) *response {
	t.Helper()
	lifetime, end := context.WithCancel(context.Background())
	t.Cleanup(end)
	return &response{id: id, lifetime: lifetime, end: end}
}

// call runs one function of the toolkit for resp, with arguments parsed as admission does.
func (e *env) call(t *testing.T, ctx context.Context, resp *response, function, args string) (map[string]any, error) {
	t.Helper()
	v, err := canonjson.Parse([]byte(args))
	if err != nil {
		t.Fatalf("parse %s: %v", args, err)
	}
	res, err := e.tk.Call(ctx, catalog.Call{
		ID:         "00000000-0000-4000-8000-000000000001",
		Toolkit:    Name,
		Function:   function,
		Arguments:  v.(map[string]any),
		Identity:   catalog.Identity{ResponseID: resp.id, Agent: "agent"},
		BashCallID: "bash-1",
		Shell:      e.shell,
		Lifetime:   resp.lifetime,
	})
	if err != nil {
		return nil, err
	}
	m, ok := res.Value.(map[string]any)
	if !ok {
		t.Fatalf("%s returned %T, want an object", function, res.Value)
	}
	if _, err := canonjson.Marshal(m); err != nil {
		t.Fatalf("%s returned a value that is not JSON: %v", function, err)
	}
	return m, nil
}

// mustCall is call for calls that must succeed.
func (e *env) mustCall(t *testing.T, resp *response, function, args string) map[string]any {
	t.Helper()
	v, err := e.call(t, t.Context(), resp, function, args)
	if err != nil {
		t.Fatalf("%s %s: %v", function, args, err)
	}
	return v
}

// background starts command with wait_seconds 0 and returns its handle.
func (e *env) background(t *testing.T, resp *response, command string) string {
	t.Helper()
	v := e.mustCall(t, resp, "run_shell_command", `{"command":`+quote(command)+`,"wait_seconds":0}`)
	if v["status"] != "running" {
		t.Fatalf("status = %v, want running (%v)", v["status"], v)
	}
	h, _ := v["handle"].(string)
	return h
}

// backgroundRunning starts command in the background and returns its handle once the command's
// process is running (not merely handed to the runner).
func (e *env) backgroundRunning(t *testing.T, resp *response, command string) string {
	t.Helper()
	e.ups++
	up := e.fifo(t, "up"+strconv.Itoa(e.ups))
	h := e.background(t, resp, "echo up > '"+up+"'; "+command)
	if _, err := os.ReadFile(up); err != nil { // returns once the command has written
		t.Fatal(err)
	}
	return h
}

// waitExited blocks until the background command behind handle has exited.
func (e *env) waitExited(t *testing.T, resp *response, handle string) {
	t.Helper()
	c, err := e.tk.lookup(resp.id, handle)
	if err != nil {
		t.Fatalf("lookup %s: %v", handle, err)
	}
	<-c.done
}

func quote(s string) string {
	b, err := canonjson.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// fifo makes a named pipe in the shell's directory. Opening it blocks until the other side
// opens it too, which lets a test and a command wait for each other without sleeping.
func (e *env) fifo(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(e.shell.dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
