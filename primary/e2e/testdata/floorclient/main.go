// Command floorclient is the floor BenchmarkFloorTwoRequests measures mindroom-agent against:
// the least a Go program can do for one `tools call` of a fast tool — start, send the POST of
// the operation and the GET of its receipt over loopback with the standard library, print the
// receipt, exit. It reads FLOOR_URL (an origin) and nothing else, and checks nothing.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

func main() {
	origin := os.Getenv("FLOOR_URL")
	hc := &http.Client{Transport: &http.Transport{}}
	body := `{"arguments":{},"call_id":"3f0c8a52-5a8e-4d8f-9a43-0f5e1c2b7d61","function":"echo","operation":"tools.call","toolkit":"test"}`
	if _, err := do(hc, http.MethodPost, origin+"/api/agent-cli/operations", body); err != nil {
		fail(err)
	}
	out, err := do(hc, http.MethodGet, origin+"/api/agent-cli/calls/3f0c8a52-5a8e-4d8f-9a43-0f5e1c2b7d61?wait=25", "")
	if err != nil {
		fail(err)
	}
	fmt.Printf("%s\n", out)
}

func do(hc *http.Client, method, target, body string) ([]byte, error) {
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer floor")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: HTTP %d", method, target, resp.StatusCode)
	}
	return io.ReadAll(resp.Body)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(4)
}
