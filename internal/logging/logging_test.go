package logging

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testpty"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name, format, level string
		check               func(t *testing.T, out string)
		wantErr             bool
	}{
		{name: "JSONWritesOneObjectPerLine", format: "json", level: "info", check: func(t *testing.T, out string) {
			var line map[string]any
			if err := json.Unmarshal([]byte(out), &line); err != nil || line["msg"] != "started" || line["k"] != "v" {
				t.Fatalf("line %q (%v)", out, err)
			}
		}},
		{name: "TextWritesKeyValuePairs", format: "text", level: "info", check: func(t *testing.T, out string) {
			if !strings.Contains(out, "msg=started k=v") {
				t.Fatalf("line %q", out)
			}
		}},
		{name: "LevelAboveInfoDropsInfo", format: "json", level: "warn", check: func(t *testing.T, out string) {
			if out != "" {
				t.Fatalf("wrote %q", out)
			}
		}},
		{name: "AutoWritesJSONWhereNoPersonReads", format: "auto", level: "info", check: func(t *testing.T, out string) {
			var line map[string]any
			if err := json.Unmarshal([]byte(out), &line); err != nil || line["msg"] != "started" {
				t.Fatalf("line %q (%v)", out, err)
			}
		}},
		{name: "UnknownFormatIsRefused", format: "xml", level: "info", wantErr: true},
		{name: "UnknownLevelIsRefused", format: "json", level: "loud", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := New(&buf, tc.format, tc.level)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			log.Info("started", "k", "v")
			tc.check(t, buf.String())
		})
	}
}

func TestDurationsAreWrittenAsText(t *testing.T) {
	for format, want := range map[string]string{
		"json": `"retry_in":"562ms","group":{"waited":"1m30s"}}`,
		"text": `retry_in=562ms group.waited=1m30s`,
	} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := New(&buf, format, "info")
			if err != nil {
				t.Fatal(err)
			}
			log.Info("retrying", "retry_in", 562*time.Millisecond, slog.Group("group", "waited", 90*time.Second))
			if got := strings.TrimSuffix(buf.String(), "\n"); !strings.HasSuffix(got, want) {
				t.Fatalf("line %q, want it to end %q", got, want)
			}
		})
	}
}

func TestAutoWritesTextToATerminal(t *testing.T) {
	tty, control := openTerminal(t)
	if !IsTerminal(tty) {
		t.Fatal("IsTerminal(a pseudo-terminal) = false")
	}
	log, err := New(tty, "auto", "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("started", "k", "v")
	line, err := control.ReadString('\n')
	if err != nil || !strings.Contains(line, "msg=started k=v") {
		t.Fatalf("line %q (%v), want text", line, err)
	}
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) || IsTerminal(&bytes.Buffer{}) {
		t.Fatal("a pipe or a buffer taken for a terminal")
	}
}

// openTerminal opens a pseudo-terminal: its replica side, what a daemon's stderr would be,
// and a reader of what appears on its controlling side.
func openTerminal(t *testing.T) (*os.File, *bufio.Reader) {
	t.Helper()
	tty, controller := testpty.Open(t)
	return tty, bufio.NewReader(controller)
}
