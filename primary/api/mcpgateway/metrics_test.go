package mcpgateway_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
)

// TestRequestsAreCountedUnderTheirRoute: the REST listener's request series label the
// gateway's requests with its path, not as unmatched.
func TestRequestsAreCountedUnderTheirRoute(t *testing.T) {
	env := testenv.Start(t)
	o := open(t, env)
	if status, body := post(t, o.url, "Bearer "+o.token, initialize, nil); status != http.StatusOK {
		t.Fatalf("initialize got %d %s", status, body)
	}
	res, err := http.Get(env.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, `route="/mcp"`) && strings.Contains(line, `method="POST"`) && strings.Contains(line, `code="200"`) {
			return
		}
	}
	t.Fatalf("no series of route /mcp:\n%s", b)
}
