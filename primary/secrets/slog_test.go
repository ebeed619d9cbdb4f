package secrets_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/secrets"
)

func TestHandlerRedactsEveryPartOfARecord(t *testing.T) {
	live := secrets.New()
	tok := token()
	live.Add(tok)
	var buf bytes.Buffer
	log := slog.New(secrets.NewHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), live))
	log = log.With("grant", tok).WithGroup("g")
	log.Debug("message "+tok, "input", `{"x":"`+tok+`"}`, "err", errors.New("failed for "+tok),
		"args", []string{"a", tok}, slog.Group("nested", "env", "T="+tok), "n", 42)
	out := buf.String()
	if strings.Contains(out, tok) {
		t.Fatalf("log line holds the secret: %s", out)
	}
	if got := strings.Count(out, "(redacted)"); got != 6 {
		t.Errorf("%d redactions in %s, want 6", got, out)
	}
	if !strings.Contains(out, "g.n=42") {
		t.Errorf("other attributes were changed: %s", out)
	}
}
