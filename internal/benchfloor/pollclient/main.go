// Command pollclient calls a tool the way a client without long polls does (MindRoom's own
// Python client among them): it POSTs the tools.call and, while the receipt is not terminal,
// sleeps 0.2 s and reads the receipt again. turncli-bench times it against itself with
// POLL_ONCE=1, which stops after the POST: a fast call answered in one request costs no more
// than that floor, one answered `queued` costs at least one poll interval more.
//
// It reads the three Agent CLI variables and uses only the standard library. Each run sends a
// fresh call id.
package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

const pollInterval = 200 * time.Millisecond

func main() {
	origin := os.Getenv("MINDROOM_AGENT_CLI_URL")
	id := newCallID()
	hc := &http.Client{Transport: &http.Transport{}}
	body := `{"arguments":{},"call_id":"` + id + `","function":"echo","operation":"tools.call","toolkit":"test"}`
	out, err := do(hc, http.MethodPost, origin+"/api/agent-cli/operations", body)
	if err != nil {
		fail(err)
	}
	if os.Getenv("POLL_ONCE") == "" {
		for polls := 0; !terminal(out); polls++ {
			if polls == 100 {
				fail(fmt.Errorf("call %s not settled after %d polls", id, polls))
			}
			time.Sleep(pollInterval)
			if out, err = do(hc, http.MethodGet, origin+"/api/agent-cli/calls/"+id, ""); err != nil {
				fail(err)
			}
		}
	}
	fmt.Printf("%s\n", out)
}

func terminal(receipt []byte) bool {
	var r struct{ Status string }
	if err := json.Unmarshal(receipt, &r); err != nil {
		fail(fmt.Errorf("receipt %q: %w", receipt, err))
	}
	return r.Status == "completed" || r.Status == "failed" || r.Status == "cancelled"
}

func newCallID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func do(hc *http.Client, method, target, body string) ([]byte, error) {
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv("MINDROOM_AGENT_CLI_TOKEN"))
	req.Header.Set("X-MindRoom-Agent-CLI-Window", os.Getenv("MINDROOM_AGENT_CLI_WINDOW"))
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
		return nil, fmt.Errorf("%s %s: HTTP %d: %s", method, target, resp.StatusCode, out)
	}
	return out, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(4)
}
