package codex

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/turncli/turncli/client/engines"
)

// printer writes the job's log: whole lines, one writer at a time, every piece of the
// engine's or the model's text cleaned.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

// line prints a tag and text; a text of several lines is indented under the first.
func (p *printer) line(tag, format string, args ...any) {
	text := strings.TrimRight(engines.Clean(fmt.Sprintf(format, args...)), "\n")
	text = strings.ReplaceAll(text, "\n", "\n    ")
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%s] %s\n", tag, text)
}

// item is the part of a thread item the log shows.
type item struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Text             string          `json:"text"`
	Command          string          `json:"command"`
	Status           string          `json:"status"`
	ExitCode         *int            `json:"exitCode"`
	AggregatedOutput *string         `json:"aggregatedOutput"`
	Changes          json.RawMessage `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Error            *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// change is one file of a fileChange item.
type change struct {
	Path string `json:"path"`
	Kind struct {
		Type string `json:"type"`
	} `json:"kind"`
}

// maxShown bounds the arguments or output of one item in the log.
const maxShown = 2000

func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	return s[:maxShown] + fmt.Sprintf("… (%d bytes more)", len(s)-maxShown)
}

// started prints an item that began.
func (p *printer) started(it item) {
	switch it.Type {
	case "commandExecution":
		p.line("command", "$ %s", it.Command)
	case "mcpToolCall":
		p.line("tool", "%s.%s %s", it.Server, it.Tool, shorten(string(it.Arguments)))
	}
}

// completed prints an item that ended.
func (p *printer) completed(it item) {
	switch it.Type {
	case "agentMessage":
		p.line("message", "%s", it.Text)
	case "commandExecution":
		switch {
		case it.ExitCode != nil:
			out := ""
			if it.AggregatedOutput != nil && *it.AggregatedOutput != "" {
				out = "\n" + shorten(*it.AggregatedOutput)
			}
			p.line("command", "exit %d: %s%s", *it.ExitCode, it.Command, out)
		default:
			p.line("command", "%s: %s", it.Status, it.Command)
		}
	case "fileChange":
		var changes []change
		_ = json.Unmarshal(it.Changes, &changes)
		for _, c := range changes {
			p.line("edit", "%s %s (%s)", c.Kind.Type, c.Path, it.Status)
		}
		if len(changes) == 0 {
			p.line("edit", "%s", it.Status)
		}
	case "mcpToolCall":
		if it.Error != nil {
			p.line("tool", "%s.%s %s: %s", it.Server, it.Tool, it.Status, it.Error.Message)
		} else {
			p.line("tool", "%s.%s %s", it.Server, it.Tool, it.Status)
		}
	}
}
