package mcp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/turncli/turncli/client"
)

// The environment of a Bash command (contract section 1) and the window header (section 2).
const (
	envURL       = "MINDROOM_AGENT_CLI_URL"
	envToken     = "MINDROOM_AGENT_CLI_TOKEN"
	envWindow    = "MINDROOM_AGENT_CLI_WINDOW"
	windowHeader = "X-MindRoom-Agent-CLI-Window"
	callsPath    = "/api/agent-cli/calls/"
	// loadProbe is the function client.Conn.LoadToolkit describes to load a toolkit.
	loadProbe  = "mindroom-agent-load"
	testToken  = "grant-Zm9vYmFyYmF6cXV4-secret"
	testWindow = "window-7"
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
	f := &fakeServer{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.seen = append(f.seen, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
		f.mu.Unlock()
		handle(w, r, string(body))
	}))
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

// outcome is what one run of the command line printed and returned.
type outcome struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command line as the binaries do, with env as its whole environment.
func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := client.Main(t.Context(), args, strings.NewReader(stdin), &stdout, &stderr,
		func(k string) string { return env[k] }, client.WithMCP(Serve))
	return outcome{code, stdout.String(), stderr.String()}
}
