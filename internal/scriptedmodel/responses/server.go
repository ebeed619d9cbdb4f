package responses

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Server is a running scripted endpoint. Its methods may be called concurrently.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	steps    []Step
	next     int // the step the next main request gets
	requests []Request
	// unexpected lists requests the server could not answer, for Unexpected.
	unexpected []string
}

// Start serves steps on a loopback port until the test ends.
func Start(t testing.TB, steps ...Step) *Server {
	t.Helper()
	s := &Server{steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// BaseURL is the API's base URL, ending in /v1: what a model provider's base_url names.
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Requests returns every POST /v1/responses so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MainRequests returns the requests that consumed a step, in order.
func (s *Server) MainRequests() []Request {
	var main []Request
	for _, r := range s.Requests() {
		if r.Main {
			main = append(main, r)
		}
	}
	return main
}

// Remaining is the number of steps not played yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.steps) - s.next
}

// Unexpected lists the requests the server could not answer (an unknown route, a malformed
// body, a main request after the last step).
func (s *Server) Unexpected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unexpected...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		// The CLI may refresh its model list; an empty one keeps its built-in metadata.
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		s.respond(w, r)
	default:
		s.refuse(w, http.StatusNotFound, fmt.Sprintf("%s %s", r.Method, r.URL.Path))
	}
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.refuse(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	var parsed struct {
		Stream bool             `json:"stream"`
		Input  []map[string]any `json:"input"`
		Tools  []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(body, &parsed); err != nil || !parsed.Stream {
		s.refuse(w, http.StatusBadRequest, fmt.Sprintf("a body that is not a streaming request (%v): %.200s", err, body))
		return
	}
	req := Request{Header: r.Header.Clone(), Body: body, Main: isMain(r.Header), Input: parsed.Input, Tools: parsed.Tools}

	s.mu.Lock()
	n := len(s.requests) + 1
	step := Step{Text: sideAnswer}
	if req.Main {
		if s.next == len(s.steps) {
			s.mu.Unlock()
			s.refuse(w, http.StatusBadRequest, fmt.Sprintf("main request %d after the script's %d steps", n, len(s.steps)))
			return
		}
		step = s.steps[s.next]
		s.next++
		if step.Call != "" && step.CallID == "" {
			step.CallID = fmt.Sprintf("call_%d", s.next)
		}
	}
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	for _, ev := range events(fmt.Sprintf("resp_%d", n), fmt.Sprintf("item_%d", n), step) {
		writeEvent(w, ev)
	}
}

// refuse answers a request the script cannot and remembers it.
func (s *Server) refuse(w http.ResponseWriter, status int, what string) {
	s.mu.Lock()
	s.unexpected = append(s.unexpected, what)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "scripted model: " + what, "type": "invalid_request_error"}})
	w.Write(b)
}

// isMain reports whether a request belongs to the main conversation: Codex names the kind of
// each request in the x-codex-turn-metadata header, "turn" for the conversation itself. A
// request without the header counts as main.
func isMain(h http.Header) bool {
	meta := h.Get("X-Codex-Turn-Metadata")
	if meta == "" {
		return true
	}
	var m struct {
		RequestKind string `json:"request_kind"`
	}
	if json.Unmarshal([]byte(meta), &m) != nil || m.RequestKind == "" {
		return true
	}
	return m.RequestKind == "turn"
}
