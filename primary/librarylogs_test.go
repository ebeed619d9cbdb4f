package primary_test

import (
	"log"
	"log/slog"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/logtest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
)

// TestLibraryLogLinesAreMaskedLikeThePrimarysOwn: what a library logs on its own (here the
// standard log package, as net/http's and gRPC's fallbacks do) goes through the primary's
// logger, which masks every live credential.
func TestLibraryLogLinesAreMaskedLikeThePrimarysOwn(t *testing.T) {
	before, flags := slog.Default(), log.Flags()
	t.Cleanup(func() { slog.SetDefault(before); log.SetFlags(flags) })
	var logs logtest.Buffer
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		c.RouteLibraryLogs = true
	}))
	token := env.Primary.RuntimeToken()
	log.Printf("a library saw %s", token)
	out := logs.String()
	if !strings.Contains(out, "a library saw") || strings.Contains(out, token) {
		t.Fatalf("the library's line was not logged masked:\n%s", out)
	}
}
