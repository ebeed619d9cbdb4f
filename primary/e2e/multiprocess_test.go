package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary"
)

// mpDeadline bounds each wait of the multi-process test.
const mpDeadline = 30 * time.Second

// mpLog collects a process's JSON log lines (its stderr) and lets a test wait for a message.
type mpLog struct {
	mu      sync.Mutex
	lines   []map[string]any
	raw     []string
	ended   bool
	changed chan struct{}
}

func (l *mpLog) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var line map[string]any
		_ = json.Unmarshal(sc.Bytes(), &line)
		l.mu.Lock()
		l.raw = append(l.raw, sc.Text())
		if line != nil {
			l.lines = append(l.lines, line)
		}
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
	}
	l.mu.Lock()
	l.ended = true
	close(l.changed)
	l.mu.Unlock()
}

// wait returns the n-th (1-based) line whose msg is msg, waiting for it to be logged.
func (l *mpLog) wait(ctx context.Context, msg string, n int) (map[string]any, error) {
	for {
		l.mu.Lock()
		seen := 0
		for _, line := range l.lines {
			if line["msg"] == msg {
				if seen++; seen == n {
					l.mu.Unlock()
					return line, nil
				}
			}
		}
		changed, ended := l.changed, l.ended
		l.mu.Unlock()
		if ended {
			return nil, fmt.Errorf("the process ended without logging %q", msg)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %q: %w", msg, ctx.Err())
		}
	}
}

// count is how many lines the process has logged with msg.
func (l *mpLog) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if line["msg"] == msg {
			n++
		}
	}
	return n
}

// has reports whether the process has logged a line match accepts.
func (l *mpLog) has(match func(map[string]any) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if match(line) {
			return true
		}
	}
	return false
}

// mpProc is a started binary. Cleanup kills it if it still runs.
type mpProc struct {
	name   string
	cmd    *exec.Cmd
	log    *mpLog
	exited chan struct{} // closed once Wait returned
	state  *os.ProcessState
}

func mpStart(t *testing.T, name, bin string, env []string, args ...string) *mpProc {
	t.Helper()
	return mpStartInheriting(t, name, bin, env, nil, args...)
}

// mpStartInheriting is mpStart for a process that inherits more than stdio, as one started
// by a careless parent does: inherited[i] becomes its descriptor 3+i (none where nil).
func mpStartInheriting(t *testing.T, name, bin string, env []string, inherited []*os.File, args ...string) *mpProc {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stderr = pw
	cmd.ExtraFiles = inherited
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	pw.Close()
	p := &mpProc{name: name, cmd: cmd, log: &mpLog{changed: make(chan struct{})}, exited: make(chan struct{})}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		defer pr.Close()
		p.log.read(pr)
	}()
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		<-logged
		if t.Failed() {
			p.log.mu.Lock()
			t.Logf("%s log:\n%s", name, strings.Join(p.log.raw, "\n"))
			p.log.mu.Unlock()
		}
	})
	return p
}

// waitLog waits for the process to log msg (the n-th time).
func (p *mpProc) waitLog(t *testing.T, msg string, n int) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mpDeadline)
	defer cancel()
	line, err := p.log.wait(ctx, msg, n)
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	return line
}

// stop sends sig and returns the exit code.
func (p *mpProc) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", p.name, err)
	}
	select {
	case <-p.exited:
	case <-time.After(mpDeadline):
		t.Fatalf("%s did not exit within %v of %v", p.name, mpDeadline, sig)
	}
	return p.state.ExitCode()
}

// mpBuild builds the three binaries once into a temporary directory.
func mpBuild(t *testing.T) string {
	t.Helper()
	dir := shellTempDir(t)
	cmd := exec.Command("go", "build", "-o", dir+string(os.PathSeparator),
		"./cmd/mindroom-primary", "./cmd/mindroom-worker", "./cmd/mindroom-agent")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// mpBaseEnv is the whole environment given to a started binary: nothing of the test's own.
// Its shells are not isolated: they trade files with the test through its temporary
// directories, which a sandbox's private /tmp would hide. Tests of isolation pass
// --isolation required, which wins over the variable.
func mpBaseEnv(t *testing.T, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + shellTempDir(t), "LANG=C.UTF-8", "MINDROOM_ISOLATION=off"}, extra...)
}

// mpBash is a finished RunBash.
type mpBash struct {
	stdout, stderr string
	result         *responsev1.BashResult
}

// mpRunBash runs command in response id; onOutput, when set, sees each chunk as it arrives.
func mpRunBash(ctx context.Context, api responsev1.ResponseServiceClient, id, bashCallID, command string, onOutput func([]byte)) (mpBash, error) {
	stream, err := api.RunBash(ctx, &responsev1.RunBashRequest{ResponseId: id, BashCallId: bashCallID, Command: command})
	if err != nil {
		return mpBash{}, err
	}
	var out, errOut bytes.Buffer
	var res *responsev1.BashResult
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return mpBash{}, err
		}
		if o := msg.GetOutput(); o != nil {
			if onOutput != nil {
				onOutput(o.GetData())
			}
			if o.GetStream() == responsev1.OutputStream_OUTPUT_STREAM_STDERR {
				errOut.Write(o.GetData())
			} else {
				out.Write(o.GetData())
			}
		}
		if r := msg.GetResult(); r != nil {
			res = r
		}
	}
	if res == nil {
		return mpBash{}, errors.New("RunBash ended without a result")
	}
	return mpBash{out.String(), errOut.String(), res}, nil
}

// mpReceipts indexes receipts by toolkit.function.
func mpReceipts(rs []*responsev1.Receipt) map[string]*responsev1.Receipt {
	out := make(map[string]*responsev1.Receipt, len(rs))
	for _, r := range rs {
		out[r.GetToolkit()+"."+r.GetFunction()] = r
	}
	return out
}

// TestMultiProcess runs the real binaries: one mindroom-primary, workers of two keys and a
// second worker of key-a, all on loopback, driven through ResponseService over gRPC.
func TestMultiProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	bin := mpBuild(t)
	state := shellTempDir(t)
	prim := mpStart(t, "mindroom-primary", filepath.Join(bin, "mindroom-primary"), mpBaseEnv(t),
		"--state-dir", state, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
		"--agent-cli-listen", "127.0.0.1:0", "--enable-test-toolkit", "--worker-keys", "key-a,key-b", "--log-level", "info")
	prim.waitLog(t, "primary serving", 1) // logged after endpoints.json is written
	var ep primary.Endpoints
	data, err := os.ReadFile(filepath.Join(state, primary.EndpointsFile))
	if err != nil {
		t.Fatalf("endpoints.json: %v", err)
	}
	if err := json.Unmarshal(data, &ep); err != nil {
		t.Fatalf("endpoints.json: %v", err)
	}
	readToken := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("credential file: %v", err)
		}
		return strings.TrimSpace(string(b))
	}
	runtimeToken := readToken(ep.RuntimeTokenFile)
	credentials := map[string]string{}
	for _, key := range []string{"key-a", "key-b"} {
		if ep.WorkerTokenFiles[key] == "" {
			t.Fatalf("endpoints.json names no credential file for %s: %s", key, data)
		}
		credentials[key] = readToken(ep.WorkerTokenFiles[key])
	}

	type mpWorker struct {
		*mpProc
		proxy string
	}
	startWorker := func(key, id string) mpWorker {
		p := mpStart(t, "mindroom-worker "+id, filepath.Join(bin, "mindroom-worker"),
			mpBaseEnv(t, "MINDROOM_WORKER_CREDENTIAL="+credentials[key]),
			"--primary", ep.GRPC, "--key", key, "--id", id, "--state-dir", shellTempDir(t), "--log-level", "info")
		started := p.waitLog(t, "worker starting", 1)
		p.waitLog(t, "connected to primary", 1)
		proxy, _ := started["proxy"].(string)
		if !strings.HasPrefix(proxy, "http://127.0.0.1:") {
			t.Fatalf("worker %s proxy = %q", id, proxy)
		}
		return mpWorker{p, proxy}
	}
	a1 := startWorker("key-a", "a1")
	b1 := startWorker("key-b", "b1")

	// A worker the primary refuses exits at once, naming what to check, rather than retrying
	// forever: a wrong credential, and a credential of another worker key.
	t.Run("RefusedWorkersExitNamingWhatToCheck", func(t *testing.T) {
		for _, tc := range []struct {
			name, credential, code, check string
		}{
			{"WrongCredential", "not-a-credential", "Unauthenticated", "MINDROOM_WORKER_CREDENTIAL_FILE"},
			{"AnotherKeysCredential", credentials["key-b"], "PermissionDenied", "MINDROOM_WORKER_KEY"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := mpStart(t, "refused worker", filepath.Join(bin, "mindroom-worker"),
					mpBaseEnv(t, "MINDROOM_WORKER_CREDENTIAL="+tc.credential),
					"--primary", ep.GRPC, "--key", "key-a", "--id", "refused-"+tc.name, "--state-dir", shellTempDir(t))
				line := p.waitLog(t, "the primary refused this worker", 1)
				select {
				case <-p.exited:
				case <-time.After(mpDeadline):
					t.Fatal("the refused worker did not exit")
				}
				if code := p.state.ExitCode(); code != 2 {
					t.Errorf("exit code %d, want 2", code)
				}
				check, _ := line["check"].(string)
				if line["code"] != tc.code || !strings.Contains(check, tc.check) {
					t.Errorf("log line %v: want code %s and a check naming %s", line, tc.code, tc.check)
				}
				if p.log.count("cannot reach the primary")+p.log.count("connection to primary ended") != 0 {
					t.Error("the refused worker retried")
				}
				if strings.Contains(fmt.Sprint(line), tc.credential) {
					t.Error("the log line repeats the credential")
				}
			})
		}
	})

	conn, err := grpc.NewClient(ep.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	api := responsev1.NewResponseServiceClient(conn)
	authed := func(ctx context.Context) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+runtimeToken)
	}
	bounded := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithTimeout(context.Background(), mpDeadline)
		return authed(ctx), cancel
	}
	open := func(key string) string {
		t.Helper()
		ctx, cancel := bounded()
		defer cancel()
		resp, err := api.OpenResponse(ctx, &responsev1.OpenResponseRequest{
			AgentName: "tester", RequesterId: "@alice:example.org", WorkerKey: key,
			Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$thread"},
			ShellMode:    responsev1.ShellMode_SHELL_MODE_MINIMAL,
		})
		if err != nil {
			t.Fatalf("OpenResponse: %v", err)
		}
		t.Cleanup(func() {
			ctx, cancel := bounded()
			defer cancel()
			_, _ = api.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
		})
		return resp.GetResponseId()
	}
	run := func(t *testing.T, id, bashCallID, command string) mpBash {
		t.Helper()
		ctx, cancel := bounded()
		defer cancel()
		out, err := mpRunBash(ctx, api, id, bashCallID, command, nil)
		if err != nil {
			t.Fatalf("RunBash %s: %v", bashCallID, err)
		}
		return out
	}
	windowEnv := func(t *testing.T, id, bashCallID string) map[string]string {
		t.Helper()
		ctx, cancel := bounded()
		defer cancel()
		w, err := api.OpenWindow(ctx, &responsev1.OpenWindowRequest{ResponseId: id, BashCallId: bashCallID})
		if err != nil {
			t.Fatalf("OpenWindow: %v", err)
		}
		return w.GetEnvironment()
	}
	onA, onB := open("key-a"), open("key-b") // key-a has only a1 yet: onA is bound to a1

	t.Run("BashOnEachWorkerCallsMindroomAgentThroughItsOwnProxy", func(t *testing.T) {
		for _, tc := range []struct {
			id, key, proxy string
		}{{onA, "key-a", a1.proxy}, {onB, "key-b", b1.proxy}} {
			out := run(t, tc.id, "own-proxy", `echo "$MINDROOM_AGENT_CLI_URL"; mindroom-agent tools call test.echo '{"key":"`+tc.key+`"}'`)
			lines := strings.Split(strings.TrimSpace(out.stdout), "\n")
			if out.result.GetExitCode() != 0 || out.result.GetError() != "" || len(lines) != 2 || lines[0] != tc.proxy {
				t.Fatalf("%s: result %v stdout %q stderr %q; want the call through %s", tc.key, out.result, out.stdout, out.stderr, tc.proxy)
			}
			rs := out.result.GetReceipts()
			if len(rs) != 1 || rs[0].GetOutcomeJson() != `{"key":"`+tc.key+`"}` || rs[0].GetParentBashCallId() != "own-proxy" {
				t.Errorf("%s: receipts = %v", tc.key, rs)
			}
		}
	})

	t.Run("WorkerCredentialIsNotInAWorkerShellsEnvironment", func(t *testing.T) {
		out := run(t, onB, "env", `env`)
		if out.result.GetExitCode() != 0 || !strings.Contains(out.stdout, "MINDROOM_AGENT_CLI_URL="+b1.proxy) {
			t.Fatalf("env: %v %q", out.result, out.stderr)
		}
		for _, secret := range []string{credentials["key-b"], "MINDROOM_WORKER_CREDENTIAL", runtimeToken} {
			if strings.Contains(out.stdout, secret) {
				t.Errorf("a worker shell's environment contains %q:\n%s", secret, out.stdout)
			}
		}
	})

	t.Run("NestedShellRunsOnTheSameWorkerAndItsCallJoinsTheOuterWindow", func(t *testing.T) {
		out := run(t, onB, "outer", `echo "where $MINDROOM_AGENT_CLI_URL $PWD"
mindroom-agent tools call shell.run_shell_command '{"command":"echo \"where $MINDROOM_AGENT_CLI_URL $PWD\"; mindroom-agent tools call test.echo {}"}'`)
		if out.result.GetExitCode() != 0 {
			t.Fatalf("outer: %v stdout %q stderr %q", out.result, out.stdout, out.stderr)
		}
		outer := strings.SplitN(out.stdout, "\n", 2)[0]
		if outer != "where "+b1.proxy+" "+strings.Fields(outer)[2] {
			t.Fatalf("outer line = %q", outer)
		}
		byFn := mpReceipts(out.result.GetReceipts())
		shell, echo := byFn["shell.run_shell_command"], byFn["test.echo"]
		if shell.GetParentBashCallId() != "outer" || echo.GetParentBashCallId() != "outer" ||
			echo.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED || len(out.result.GetReceipts()) != 2 {
			t.Fatalf("receipts = %v, want the nested call in the outer window", out.result.GetReceipts())
		}
		var res struct {
			ExitCode int    `json:"exit_code"`
			Stdout   string `json:"stdout"`
		}
		if err := json.Unmarshal([]byte(shell.GetOutcomeJson()), &res); err != nil || res.ExitCode != 0 {
			t.Fatalf("run_shell_command outcome = %s (%v)", shell.GetOutcomeJson(), err)
		}
		if nested := strings.SplitN(res.Stdout, "\n", 2)[0]; nested != outer {
			t.Errorf("nested shell ran at %q, outer at %q: not the same worker and workspace", nested, outer)
		}
	})

	a2 := startWorker("key-a", "a2")

	t.Run("GrantOfAResponseBoundToAnotherWorkerIsRejected", func(t *testing.T) {
		grantA := windowEnv(t, onA, "grant-a")["MINDROOM_AGENT_CLI_TOKEN"]
		// Inside a shell of key-b's worker, with the grant of the response bound to a1.
		out := run(t, onB, "stolen", `MINDROOM_AGENT_CLI_TOKEN=`+bashQuote(grantA)+` mindroom-agent tools list; echo "exit=$?"`)
		if !strings.HasSuffix(out.stdout, "exit=4\n") || !strings.Contains(out.stdout, "authority") {
			t.Errorf("stolen grant in b1's shell: stdout %q stderr %q, want exit 4 (authority unavailable)", out.stdout, out.stderr)
		}
		for _, tc := range []struct{ name, origin string }{
			{"WorkerOfAnotherKey", b1.proxy}, {"OtherWorkerOfTheSameKey", a2.proxy}, {"PrimaryListener", ep.AgentCLI},
		} {
			req, _ := http.NewRequest(http.MethodPost, tc.origin+"/api/agent-cli/operations", strings.NewReader(`{"operation":"tools.list"}`))
			req.Header.Set("Authorization", "Bearer "+grantA)
			resp, err := (&http.Client{Timeout: mpDeadline, Transport: &http.Transport{Proxy: nil}}).Do(req)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || string(body) != `{"detail":"Agent CLI authority is unavailable"}` {
				t.Errorf("%s: %d %s, want the uniform 401", tc.name, resp.StatusCode, body)
			}
		}
	})

	t.Run("KilledWorkerFailsItsCommandAndTheResponseMovesToAnotherWorkerOfItsKey", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		var mu sync.Mutex
		var seen strings.Builder
		ready := make(chan struct{})
		readyOnce := sync.OnceFunc(func() { close(ready) })
		type outcome struct {
			out mpBash
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			out, err := mpRunBash(authed(ctx), api, onA, "doomed", `echo "pgid $$"; echo ready; sleep 1000`, func(b []byte) {
				mu.Lock()
				seen.Write(b)
				if strings.Contains(seen.String(), "ready\n") {
					readyOnce()
				}
				mu.Unlock()
			})
			done <- outcome{out, err}
		}()
		select {
		case <-ready:
		case <-ctx.Done():
			t.Fatalf("the command did not start on a1: %v", ctx.Err())
		}
		mu.Lock()
		pgid, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(seen.String(), "\n", 2)[0], "pgid "))
		mu.Unlock()
		// The killed worker cannot stop its command: the test does, at the end.
		t.Cleanup(func() {
			if pgid > 1 {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		})
		if err := a1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		var got outcome
		select {
		case got = <-done:
		case <-ctx.Done():
			t.Fatalf("RunBash did not end after its worker was killed: %v", ctx.Err())
		}
		if got.err != nil {
			t.Fatalf("RunBash: %v", got.err)
		}
		if e := got.out.result.GetError(); !strings.Contains(e, "worker a1") || !strings.Contains(e, "disconnected") {
			t.Fatalf("result = %v, want an error naming worker a1", got.out.result)
		}

		out := run(t, onA, "after-failover", `echo "$MINDROOM_AGENT_CLI_URL"; mindroom-agent tools call test.echo '{"after":"failover"}'`)
		lines := strings.Split(strings.TrimSpace(out.stdout), "\n")
		if out.result.GetExitCode() != 0 || out.result.GetError() != "" || len(lines) != 2 || lines[0] != a2.proxy {
			t.Fatalf("after failover: result %v stdout %q stderr %q; want a2's proxy %s", out.result, out.stdout, out.stderr, a2.proxy)
		}
		if rs := out.result.GetReceipts(); len(rs) != 1 || rs[0].GetOutcomeJson() != `{"after":"failover"}` {
			t.Errorf("receipts = %v", rs)
		}
	})

	t.Run("ProcessesExitZeroOnSIGTERM", func(t *testing.T) {
		for _, w := range []mpWorker{a2, b1} {
			if code := w.stop(t, syscall.SIGTERM); code != 0 {
				t.Errorf("%s exited %d on SIGTERM", w.name, code)
			}
		}
		if code := prim.stop(t, syscall.SIGTERM); code != 0 {
			t.Errorf("mindroom-primary exited %d on SIGTERM", code)
		}
		if _, err := os.Stat(filepath.Join(state, primary.EndpointsFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("endpoints.json after exit: %v, want it removed", err)
		}
	})
}
