package e2e

import (
	"net/http"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
)

// The REST address opened in a browser leads to the dashboard; only the root redirects, and
// only to GET and HEAD: every other path still meets the API's credential check.
func TestRESTRootRedirectsToTheDashboard(t *testing.T) {
	env := testenv.Start(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		method, path string
		code         int
		location     string
	}{
		{http.MethodGet, "/", http.StatusFound, "/ui/"},
		{http.MethodHead, "/", http.StatusFound, "/ui/"},
		{http.MethodPost, "/", http.StatusUnauthorized, ""},
		{http.MethodGet, "/index.html", http.StatusUnauthorized, ""},
	} {
		req, err := http.NewRequest(tc.method, env.HTTPURL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code || resp.Header.Get("Location") != tc.location {
			t.Errorf("%s %s: %d Location %q, want %d %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Location"), tc.code, tc.location)
		}
	}
}
