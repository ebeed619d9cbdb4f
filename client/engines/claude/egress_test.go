package claude_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// egress is where the CLI's proxy variables point: only loopback bypasses it, so any request
// the CLI makes beside the scripted model's (an update check, telemetry, an error report)
// lands here, is refused at once instead of hanging the test, and fails it.
type egress struct {
	URL string

	mu    sync.Mutex
	tried []string
}

func startEgress(t *testing.T) *egress {
	t.Helper()
	e := &egress{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.tried = append(e.tried, r.Method+" "+r.Host+r.URL.Path)
		e.mu.Unlock()
		http.Error(w, "no traffic leaves loopback in this test", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if len(e.tried) > 0 {
			t.Errorf("the CLI tried to reach beyond loopback: %q", e.tried)
		}
	})
	e.URL = srv.URL
	return e
}

// proxyEnv sends everything but loopback to the egress recorder.
func (e *egress) proxyEnv() map[string]string {
	return map[string]string{
		"HTTPS_PROXY": e.URL, "HTTP_PROXY": e.URL, "https_proxy": e.URL, "http_proxy": e.URL,
		"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
	}
}
