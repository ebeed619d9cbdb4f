package e2e

import (
	"context"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/testenv"
)

// Fixed call ids, so that a test can predict every byte a command prints.
const (
	agentCallA = "3f0c8a52-5a8e-4d8f-9a43-0f5e1c2b7d61"
	agentCallB = "9d2b6e14-0c7a-4f3e-b1d5-6a8f2e4c9b03"
)

// jsonLine checks that stdout is exactly one line of canonical JSON (contract sections 8 and
// 12) and returns its object.
func jsonLine(t testing.TB, stdout string) map[string]any {
	t.Helper()
	line, ok := strings.CutSuffix(stdout, "\n")
	if !ok || strings.Contains(line, "\n") {
		t.Fatalf("stdout is not exactly one line: %q", stdout)
	}
	obj, err := canonjson.ParseObject([]byte(line))
	if err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, line)
	}
	canon, err := canonjson.Marshal(obj)
	if err != nil || string(canon) != line {
		t.Fatalf("stdout is not canonical JSON:\n got %s\nwant %s", line, canon)
	}
	return obj
}

// expectOutput checks an invocation's exit code and that stdout is exactly want (one canonical
// JSON line) and stderr exactly wantErr, each followed by a newline unless empty.
func expectOutput(t testing.TB, code int, stdout, stderr string, wantCode int, want, wantErr string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit code = %d, want %d (stdout %q, stderr %q)", code, wantCode, stdout, stderr)
	}
	jsonLine(t, stdout)
	if stdout != want+"\n" {
		t.Errorf("stdout:\n got %s want %s", stdout, want+"\n")
	}
	if wantErr != "" {
		wantErr += "\n"
	}
	if stderr != wantErr {
		t.Errorf("stderr:\n got %q\nwant %q", stderr, wantErr)
	}
}

// expectError checks an invocation that failed: exit code, {"error":…} (with call_id when it
// is not empty) on stdout, the same message on stderr. It returns the message.
func expectError(t testing.TB, code int, stdout, stderr string, wantCode int, callID string) string {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit code = %d, want %d (stdout %q, stderr %q)", code, wantCode, stdout, stderr)
	}
	obj := jsonLine(t, stdout)
	msg, _ := obj["error"].(string)
	want := map[string]any{"error": msg}
	if callID != "" {
		want["call_id"] = callID
	}
	if msg == "" || !canonjson.Equal(obj, want) {
		t.Errorf("stdout = %s, want the keys of %v", stdout, want)
	}
	if stderr != msg+"\n" {
		t.Errorf("stderr = %q, want the message of stdout %q", stderr, msg)
	}
	return msg
}

// receipt is the canonical receipt line mindroom-agent prints for a call of test.<function>.
func receiptLine(callID, function, outcome, parent, status string) string {
	return `{"attachments":[],"call_id":"` + callID + `","function":"` + function + `","outcome":` + outcome +
		`,"parent_bash_call_id":"` + parent + `","status":"` + status + `","toolkit":"test"}`
}

// quote quotes s for Bash.
func bashQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// stepFiles lets one Bash command run several mindroom-agent invocations and keep each one's exit
// code, stdout and stderr apart: the command starts with Prelude and runs `step NAME CMD…`.
type stepFiles struct{ dir string }

func newStepFiles(t testing.TB) stepFiles { return stepFiles{dir: t.TempDir()} }

// Prelude defines the step function of the Bash command.
func (s stepFiles) Prelude() string {
	return "STEPS=" + bashQuote(s.dir) + "\n" +
		`step() { n=$1; shift; "$@" >"$STEPS/$n.out" 2>"$STEPS/$n.err"; echo $? >"$STEPS/$n.code"; }` + "\n"
}

// Path is a file in the directory of the steps (for inputs the command reads).
func (s stepFiles) Path(name string) string { return filepath.Join(s.dir, name) }

// stepOutput is one finished step.
type stepOutput struct {
	code           int
	stdout, stderr string
}

func (s stepFiles) Get(t testing.TB, name string) stepOutput {
	t.Helper()
	read := func(ext string) string {
		b, err := os.ReadFile(filepath.Join(s.dir, name+ext))
		if err != nil {
			t.Fatalf("step %s did not run: %v", name, err)
		}
		return string(b)
	}
	code, err := strconv.Atoi(strings.TrimSpace(read(".code")))
	if err != nil {
		t.Fatalf("step %s: exit code: %v", name, err)
	}
	return stepOutput{code: code, stdout: read(".out"), stderr: read(".err")}
}

// grantOf returns the grant of a response as its shells see it, by opening and closing a
// window the way a runtime that runs its own shell would.
func grantOf(t testing.TB, env *testenv.Env, responseID string) string {
	t.Helper()
	ctx := context.Background()
	w, err := env.Runtime.OpenWindow(ctx, &responsev1.OpenWindowRequest{ResponseId: responseID, BashCallId: "grant-peek"})
	if err != nil {
		t.Fatalf("OpenWindow: %v", err)
	}
	if _, err := env.Runtime.CloseWindow(ctx, &responsev1.CloseWindowRequest{ResponseId: responseID, BashCallId: "grant-peek"}); err != nil {
		t.Fatalf("CloseWindow: %v", err)
	}
	token := w.GetEnvironment()["MINDROOM_AGENT_CLI_TOKEN"]
	if token == "" {
		t.Fatalf("window environment has no grant: %v", w.GetEnvironment())
	}
	return token
}

// expectNoGrant fails if any of the texts contains the grant.
func expectNoGrant(t testing.TB, grant string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, grant) {
			t.Errorf("output contains the grant: %q", s)
		}
	}
}

// recorder is an HTTP server that records the requests it gets and answers each with handle
// (or 502 when handle is nil). Tests put it between mindroom-agent and the primary, or where
// nothing should ever arrive.
type recorder struct {
	URL string

	mu   sync.Mutex
	seen []seenRequest
}

// seenRequest is what a recorder keeps of a request.
type seenRequest struct {
	Method, Path, RawQuery, Authorization string
}

// startRecorder starts a recorder on loopback; it closes at test cleanup.
func startRecorder(t testing.TB, handle http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, seenRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization")})
		rec.mu.Unlock()
		if handle == nil {
			http.Error(w, `{"detail":"not the Agent CLI"}`, http.StatusBadGateway)
			return
		}
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

// Requests returns what the recorder has seen so far.
func (r *recorder) Requests() []seenRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seenRequest(nil), r.seen...)
}

// startForwarder starts a recorder that forwards to the primary's Agent CLI listener every
// request intercept does not answer itself (intercept returns true when it answered). A nil
// intercept forwards everything.
func startForwarder(t testing.TB, env *testenv.Env, intercept func(http.ResponseWriter, *http.Request) bool) *recorder {
	t.Helper()
	target, err := url.Parse(env.AgentCLIURL)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{} // no proxy: a zero Transport never reads the environment
	fwd := httputil.NewSingleHostReverseProxy(target)
	fwd.Transport = tr
	fwd.ErrorLog = log.New(forwarderLog{t}, "forwarder: ", 0)
	t.Cleanup(tr.CloseIdleConnections) // after the server's Close: cleanups run last first
	rec := startRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if intercept != nil && intercept(w, r) {
			return
		}
		fwd.ServeHTTP(w, r)
	})
	return rec
}

// dropConnection closes the client's connection without an answer.
func dropConnection(t testing.TB, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

type forwarderLog struct{ t testing.TB }

func (w forwarderLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
