package benchfloor

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHTTPHandlerAnswersBothRequestsOfACall(t *testing.T) {
	srv := httptest.NewServer(HTTPHandler())
	defer srv.Close()
	for _, tc := range []struct {
		name, method, path, body, want string
		code                           int
	}{
		{"PostEchoesTheOperationAsQueued", http.MethodPost, OperationsPath, `{"call_id":"c1","operation":"tools.call"}`, `"status":"queued"`, 200},
		{"GetAnswersCompleted", http.MethodGet, CallsPathPrefix + "c1?wait=25", "", `"status":"completed"`, 200},
		{"InvalidJSONIsRefused", http.MethodPost, OperationsPath, `{`, `invalid JSON`, 422},
		{"OtherPathsAreNotFound", http.MethodGet, "/other", "", "Not Found", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
				t.Fatalf("HTTP %d %s", resp.StatusCode, body)
			}
		})
	}
}

func TestParkingHoldsGetsUntilReleased(t *testing.T) {
	p := NewParking()
	srv := httptest.NewServer(p)
	defer srv.Close()
	answered := make(chan string, 1)
	go func() {
		resp, err := srv.Client().Get(srv.URL + CallsPathPrefix + "c1?wait=30")
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		answered <- string(body)
	}()
	resp, err := srv.Client().Post(srv.URL+OperationsPath, "application/json", strings.NewReader(`{"operation":"tools.call"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case got := <-answered:
		t.Fatalf("answered before the release: %s", got)
	default:
	}
	p.Release()
	if got := <-answered; !strings.Contains(got, `"status":"completed"`) {
		t.Fatalf("after the release: %s", got)
	}
}
