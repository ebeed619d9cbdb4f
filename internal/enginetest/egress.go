package enginetest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// Egress is where a CLI's proxy variables point in a test: only loopback bypasses it, so any
// request the CLI makes beside the scripted model's (an update check, telemetry, an error
// report, a plugin catalog) lands here and is refused at once instead of hanging the test.
type Egress struct {
	// URL is the proxy's address.
	URL string

	mu    sync.Mutex
	tried []string
}

// StartEgress starts an Egress, closed when the test ends.
func StartEgress(t testing.TB) *Egress {
	t.Helper()
	e := &Egress{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.tried = append(e.tried, r.Method+" "+r.Host+r.URL.Path)
		e.mu.Unlock()
		http.Error(w, "no traffic leaves loopback in this test", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	return e
}

// Tried is every request sent to the proxy so far.
func (e *Egress) Tried() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.tried)
}

// ProxyEnv sends everything but loopback to the proxy.
func (e *Egress) ProxyEnv() map[string]string {
	return map[string]string{
		"HTTPS_PROXY": e.URL, "HTTP_PROXY": e.URL, "ALL_PROXY": e.URL, "https_proxy": e.URL, "http_proxy": e.URL,
		"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
	}
}
