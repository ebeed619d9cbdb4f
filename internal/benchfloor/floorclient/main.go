// Command floorclient is the floor turncli-bench measures one `mindroom-agent tools call` process
// against: the least a Go program can do for one call of a fast tool. It starts, sends the POST
// of a tools.call operation and then the long-poll GET of its receipt over loopback with the
// standard library (one keep-alive connection, as mindroom-agent uses), prints the receipt and
// exits. It reads FLOOR_URL (an origin) and nothing else, and checks nothing but HTTP 200.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

const callID = "3f0c8a52-5a8e-4d8f-9a43-0f5e1c2b7d61"

func main() {
	origin := os.Getenv("FLOOR_URL")
	hc := &http.Client{Transport: &http.Transport{}}
	body := `{"arguments":{},"call_id":"` + callID + `","function":"echo","operation":"tools.call","toolkit":"test"}`
	if _, err := do(hc, http.MethodPost, origin+"/api/agent-cli/operations", body); err != nil {
		fail(err)
	}
	out, err := do(hc, http.MethodGet, origin+"/api/agent-cli/calls/"+callID+"?wait=25", "")
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
	req.Header.Set("X-MindRoom-Agent-CLI-Window", "floor")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: HTTP %d", method, target, resp.StatusCode)
	}
	return out, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(4)
}
