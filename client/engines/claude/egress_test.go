package claude_test

import (
	"testing"

	"github.com/turncli/turncli/internal/enginetest"
)

// startEgress is an enginetest.Egress that fails the test if the CLI tried to reach beyond
// loopback.
func startEgress(t *testing.T) *enginetest.Egress {
	t.Helper()
	e := enginetest.StartEgress(t)
	t.Cleanup(func() {
		if tried := e.Tried(); len(tried) > 0 {
			t.Errorf("the CLI tried to reach beyond loopback: %q", tried)
		}
	})
	return e
}
