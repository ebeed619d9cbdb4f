package metrics

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestHTTPLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := NewHTTP(reg)
	route := func(r *http.Request) string {
		if r.URL.Path == "/known" {
			return "/known"
		}
		return ""
	}
	srv := h.Static("test", route, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/known" {
			http.NotFound(w, r)
		}
	}))
	for _, tc := range []struct {
		name, method, path string
		series             []string // server, route, method, code
	}{
		{"KnownRouteIsLabelledByItsPattern", http.MethodGet, "/known", []string{"test", "/known", "GET", "200"}},
		{"OtherPathIsUnmatched", http.MethodGet, "/calls/3f0c8a52-5a8e-4d8f-9a43-0f5e1c2b7d61", []string{"test", Unmatched, "GET", "404"}},
		{"UnknownMethodIsOther", "BREW", "/known", []string{"test", "/known", "other", "200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.path, nil))
			if got := testutil.ToFloat64(h.requests.WithLabelValues(tc.series...)); got != 1 {
				t.Fatalf("requests%v = %v, want 1", tc.series, got)
			}
		})
	}
	if n := testutil.CollectAndCount(h.requests); n != 3 {
		t.Fatalf("%d request series, want 3", n)
	}
}

func TestRecordRouteLabelsARoutedRequest(t *testing.T) {
	h := NewHTTP(prometheus.NewRegistry())
	srv := h.Routed("api", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			RecordRoute(r, "/mcp")
		}
	}))
	srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
	srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/other", nil))
	for _, series := range [][]string{{"api", "/mcp", "POST", "200"}, {"api", Unmatched, "POST", "200"}} {
		if got := testutil.ToFloat64(h.requests.WithLabelValues(series...)); got != 1 {
			t.Errorf("requests%v = %v, want 1", series, got)
		}
	}
	// Outside Routed it records nothing and does not fail.
	RecordRoute(httptest.NewRequest(http.MethodPost, "/mcp", nil), "/mcp")
}
