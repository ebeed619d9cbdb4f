package messages

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a scripted model listening on loopback. Its methods may be called while the
// engine talks to it.
type Server struct {
	// URL is the origin to give the engine, e.g. as ANTHROPIC_BASE_URL.
	URL string

	mu       sync.Mutex
	script   []Step
	played   int // steps answered so far
	overrun  int // main-conversation requests answered after the script ended
	requests []Request
}

// Start serves script on a loopback port until the test ends.
func Start(t testing.TB, script ...Step) *Server {
	t.Helper()
	s := &Server{script: script}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// Played is the number of steps answered so far.
func (s *Server) Played() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.played
}

// Overrun is the number of main-conversation requests that came after the script ended.
func (s *Server) Overrun() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overrun
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ToolUseID is the id the server gives the tool use of the step at index i of the script
// (counting from 0), so a test knows it in advance.
func ToolUseID(i int) string { return "toolu_scripted_" + strconv.Itoa(i) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Raw: raw, Received: time.Now()}
	_ = json.Unmarshal(raw, &req.Body) // a body that is not JSON is recorded raw
	req.Main = r.URL.Path == "/v1/messages" && req.offersTools()

	s.mu.Lock()
	s.requests = append(s.requests, req)
	id := len(s.requests)
	step, index := Text(SideAnswer), -1
	if req.Main {
		if s.played < len(s.script) {
			step, index = s.script[s.played], s.played
			s.played++
		} else {
			step = Text(OutOfScript)
			s.overrun++
		}
	}
	s.mu.Unlock()

	switch {
	case strings.HasSuffix(r.URL.Path, "/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": inputTokens})
	case r.URL.Path != "/v1/messages" || r.Method != http.MethodPost:
		http.NotFound(w, r)
	case req.Body["stream"] == true:
		streamMessage(w, id, step, index)
	default:
		writeJSON(w, message(id, step, index))
	}
	s.mu.Lock()
	s.requests[id-1].Answered = time.Now()
	s.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
