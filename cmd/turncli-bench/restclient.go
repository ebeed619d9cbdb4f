package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// restClient is one keep-alive HTTP client of the Agent CLI's two routes, used alike against the
// primary, a sandbox proxy and the net/http floor, so the client's own cost is the same on both
// sides of a ratio.
type restClient struct {
	hc    *http.Client
	shell shell
}

func newRESTClient(s shell) *restClient {
	return &restClient{hc: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}}, shell: s}
}

func (c *restClient) close() { c.hc.CloseIdleConnections() }

var (
	completed = []byte(`"status":"completed"`)
	terminal  = [][]byte{completed, []byte(`"status":"failed"`), []byte(`"status":"cancelled"`)}
)

func isTerminal(receipt []byte) bool {
	for _, t := range terminal {
		if bytes.Contains(receipt, t) {
			return true
		}
	}
	return false
}

// call submits a tools.call and returns its id and receipt.
func (c *restClient) call(ctx context.Context, toolkit, function, args string) (string, []byte, error) {
	id := uuid.NewString()
	body := `{"arguments":` + args + `,"call_id":"` + id + `","function":"` + function + `","operation":"tools.call","toolkit":"` + toolkit + `"}`
	receipt, err := c.do(ctx, http.MethodPost, c.shell.origin+"/api/agent-cli/operations", body)
	return id, receipt, err
}

// wait long-polls the call's receipt until it is terminal and returns it.
func (c *restClient) wait(ctx context.Context, id string) ([]byte, error) {
	for {
		receipt, err := c.do(ctx, http.MethodGet, c.shell.origin+"/api/agent-cli/calls/"+id+"?wait=30", "")
		if err != nil || isTerminal(receipt) {
			return receipt, err
		}
	}
}

// complete calls toolkit.function and waits until the call is completed: one completed call
// of the throughput measures.
func (c *restClient) complete(ctx context.Context, toolkit, function, args string) error {
	id, receipt, err := c.call(ctx, toolkit, function, args)
	if err != nil {
		return err
	}
	if !isTerminal(receipt) {
		if receipt, err = c.wait(ctx, id); err != nil {
			return err
		}
	}
	if !bytes.Contains(receipt, completed) {
		return fmt.Errorf("call %s did not complete: %s", id, receipt)
	}
	return nil
}

func (c *restClient) do(ctx context.Context, method, target, body string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.shell.token)
	req.Header.Set("X-MindRoom-Agent-CLI-Window", c.shell.window)
	if c.shell.traceparent != "" {
		req.Header.Set("Traceparent", c.shell.traceparent)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: HTTP %d: %s", method, target, resp.StatusCode, out)
	}
	return out, nil
}
