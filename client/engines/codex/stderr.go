package codex

import (
	"bytes"
	"io"
	"strings"
	"sync"

	"github.com/turncli/turncli/client/engines"
)

// tailLines is how many of the CLI's last lines of standard error a failed result quotes.
const tailLines = 20

// stderrTail copies the CLI's standard error, cleaned, to the driver's and keeps its last
// lines for a failed result.
type stderrTail struct {
	w io.Writer

	mu      sync.Mutex
	partial []byte
	lines   []string
}

func (s *stderrTail) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.add(string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	return len(p), nil
}

func (s *stderrTail) add(line string) {
	line = engines.Clean(line)
	io.WriteString(s.w, line+"\n")
	s.lines = append(s.lines, line)
	if len(s.lines) > tailLines {
		s.lines = s.lines[len(s.lines)-tailLines:]
	}
}

// String is the last lines written, a final unfinished one included.
func (s *stderrTail) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := s.lines
	if len(s.partial) > 0 {
		lines = append(append([]string(nil), lines...), engines.Clean(string(s.partial)))
	}
	return strings.Join(lines, "\n")
}
