package client

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testToken  = "grant-Zm9vYmFyYmF6cXV4-secret"
	testWindow = "window-7"
	testCallID = "0b7e2a8c-3c1f-4b7e-9a51-5d0c2f3e4a6b"
)

// seen is one request as the fake server received it.
type seen struct {
	method, path, query string
	header              http.Header
	body                string
}

// fakeServer is the server side of the wire: it records every request and answers with
// handle.
type fakeServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []seen
}

func newFakeServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body string)) *fakeServer {
	t.Helper()
	return newFakeServerWith(t, func(*http.Server) {}, handle)
}

// newFakeServerWith lets configure adjust the server before it starts.
func newFakeServerWith(t *testing.T, configure func(*http.Server), handle func(w http.ResponseWriter, r *http.Request, body string)) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.seen = append(f.seen, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
		f.mu.Unlock()
		handle(w, r, string(body))
	}))
	configure(f.srv.Config)
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.seen...)
}

func (f *fakeServer) env() map[string]string {
	return map[string]string{envURL: f.srv.URL, envToken: testToken, envWindow: testWindow}
}

// answer writes a JSON reply.
func answer(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	io.WriteString(w, body)
}

func receipt(callID, status string) string {
	outcome := "null"
	switch status {
	case StatusCompleted:
		outcome = `{"temp":21}`
	case StatusFailed:
		outcome = `"Invalid tool arguments"`
	}
	return fmt.Sprintf(`{"attachments":[],"call_id":%q,"function":"forecast","outcome":%s,"parent_bash_call_id":"bash-1","status":%q,"toolkit":"weather"}`,
		callID, outcome, status)
}

// outcome is what one run of the command line printed and returned.
type outcome struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command line with env as its whole environment.
func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) outcome {
	t.Helper()
	return runApp(t, func(*app) {}, env, stdin, args...)
}

func runApp(t *testing.T, configure func(*app), env map[string]string, stdin string, args ...string) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{
		stdin:        strings.NewReader(stdin),
		stdout:       &stdout,
		stderr:       &stderr,
		getenv:       func(k string) string { return env[k] },
		random:       rand.Reader,
		pollInterval: time.Millisecond,
	}
	configure(a)
	code := a.run(t.Context(), args)
	return outcome{code, stdout.String(), stderr.String()}
}

// line returns the single JSON object printed on stdout.
func (o outcome) line(t *testing.T) map[string]any {
	t.Helper()
	if strings.Count(o.stdout, "\n") != 1 || !strings.HasSuffix(o.stdout, "\n") {
		t.Fatalf("stdout is not exactly one line: %q (stderr %q)", o.stdout, o.stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(o.stdout), &m); err != nil {
		t.Fatalf("stdout is not a JSON object: %q: %v", o.stdout, err)
	}
	return m
}

// wantError checks an error output: the exit code, {"error":…} on stdout containing
// fragment, and the same message on stderr. It returns the stdout object.
func (o outcome) wantError(t *testing.T, code int, fragment string) map[string]any {
	t.Helper()
	if o.code != code {
		t.Fatalf("exit code %d, want %d (stdout %q, stderr %q)", o.code, code, o.stdout, o.stderr)
	}
	m := o.line(t)
	msg, _ := m["error"].(string)
	if !strings.Contains(msg, fragment) {
		t.Fatalf("error %q does not contain %q", msg, fragment)
	}
	if o.stderr != msg+"\n" {
		t.Fatalf("stderr %q is not the message %q", o.stderr, msg)
	}
	return m
}

func (o outcome) wantCode(t *testing.T, code int) {
	t.Helper()
	if o.code != code {
		t.Fatalf("exit code %d, want %d (stdout %q, stderr %q)", o.code, code, o.stdout, o.stderr)
	}
}
