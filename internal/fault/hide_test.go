package fault_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/fault"
)

func TestHide(t *testing.T) {
	t.Run("TheReplyNamesTheIDTheLogLineCarries", func(t *testing.T) {
		var buf bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&buf, nil))
		id := fault.Hide(t.Context(), log, errors.New("disk I/O error at /var/lib/secret"), "job log read failed", "job", 7)
		var line map[string]any
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("log %q: %v", buf.String(), err)
		}
		if line[fault.IDKey] != id || line["err"] != "disk I/O error at /var/lib/secret" || line["job"] != float64(7) || line["level"] != "ERROR" {
			t.Fatalf("log line %v, want error_id %s with the error and attributes", line, id)
		}
		e := fault.Hidden(id, "the log of job 7 could not be read")
		if want := "the log of job 7 could not be read (id " + id + "); see the primary's log"; e.Error() != want || e.ID != id || e.Kind != fault.Internal {
			t.Fatalf("Hidden = %v %q (id %q), want Internal %q", e.Kind, e.Error(), e.ID, want)
		}
		if strings.Contains(e.Error(), "/var/lib/secret") {
			t.Fatalf("the reply shows the fault: %q", e.Error())
		}
	})
	t.Run("IDsAreShortHexAndFresh", func(t *testing.T) {
		seen := map[string]bool{}
		for range 100 {
			id := fault.NewID()
			if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(id) || seen[id] {
				t.Fatalf("id %q (seen before: %v)", id, seen[id])
			}
			seen[id] = true
		}
	})
	t.Run("ANilLoggerDiscardsAndStillGivesAnID", func(t *testing.T) {
		if id := fault.Hide(t.Context(), nil, errors.New("x"), "m"); id == "" {
			t.Fatal("no id")
		}
	})
	t.Run("AProcessNamesItsOwnLog", func(t *testing.T) {
		if got, want := fault.HiddenMessage("Agent CLI internal error", "3f9a1c2e", fault.WorkerLog), "Agent CLI internal error (id 3f9a1c2e); see the worker's log"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}
