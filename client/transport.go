package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/turncli/turncli/internal/canonjson"
)

// Wire constants (contract sections 2 and 4).
const (
	operationsPath = "/api/agent-cli/operations"
	callsPath      = "/api/agent-cli/calls/"
	windowHeader   = "X-MindRoom-Agent-CLI-Window"
	maxBodyBytes   = 64 << 10
	requestTimeout = 30 * time.Second
)

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// newHTTPClient returns the client of one process run: no proxy whatever the environment
// says, no redirects followed, keep-alive reuse between the requests of the run. Timeouts are
// per request (see transport.do). dial is nil outside tests.
func newHTTPClient(dial dialFunc) *http.Client {
	if dial == nil {
		dial = (&net.Dialer{Timeout: requestTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         dial,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// transport sends the two Agent CLI requests to one validated endpoint.
type transport struct {
	ep *endpoint
	hc *http.Client
	// timeout bounds one request, plus the wait a long poll asks for; zero is requestTimeout.
	timeout time.Duration
}

func (t *transport) requestTimeout() time.Duration {
	if t.timeout > 0 {
		return t.timeout
	}
	return requestTimeout
}

// reply is a successful response: its object and the object's canonical JSON.
type reply struct {
	obj   map[string]any
	canon []byte
}

// post sends one operation object.
func (t *transport) post(ctx context.Context, body []byte) (*reply, error) {
	return t.do(ctx, http.MethodPost, t.ep.origin+operationsPath, body, t.requestTimeout())
}

// get reads a receipt; wait > 0 asks the server to long-poll that long.
func (t *transport) get(ctx context.Context, callID string, wait time.Duration) (*reply, error) {
	target := t.ep.origin + callsPath + url.PathEscape(callID)
	if wait > 0 {
		target += "?wait=" + formatSeconds(wait)
	}
	return t.do(ctx, http.MethodGet, target, nil, t.requestTimeout()+wait)
}

func (t *transport) do(ctx context.Context, method, target string, body []byte, timeout time.Duration) (*reply, error) {
	reqCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(reqCtx, method, target, rd)
	if err != nil {
		return nil, unavailablef("Agent CLI request to %s could not be built: %v", target, err)
	}
	req.Header.Set("Authorization", "Bearer "+t.ep.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "mindroom-agent")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.GetBody = nil // net/http may not replay a POST, even one it believes unsent
	}
	if t.ep.window != "" {
		req.Header.Set(windowHeader, t.ep.window)
	}
	if tc := traceFor(ctx, t.ep.trace); tc.parent != "" {
		req.Header[traceparentHeader] = []string{tc.parent} // the W3C spelling, lower-case
		if tc.state != "" {
			req.Header[tracestateHeader] = []string{tc.state}
		}
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return nil, requestFailure(ctx, target, timeout, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		e := requestFailure(ctx, target, timeout, err)
		e.status = resp.StatusCode
		return nil, e
	}
	if len(data) > maxBodyBytes {
		return nil, &cliError{code: ExitUnavailable, status: resp.StatusCode,
			msg: fmt.Sprintf("Agent CLI response from %s is invalid: it exceeds 64 KiB", target)}
	}
	return decodeResponse(target, resp, data)
}

// decodeResponse chooses the outcome of a complete response, once, by its status code.
func decodeResponse(target string, resp *http.Response, data []byte) (*reply, error) {
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		obj, err := canonjson.ParseObject(data)
		if err != nil {
			return nil, &cliError{code: ExitUnavailable, status: code,
				msg: fmt.Sprintf("Agent CLI response from %s is invalid: %v", target, err)}
		}
		canon, err := canonjson.Marshal(obj)
		if err != nil {
			return nil, &cliError{code: ExitUnavailable, status: code,
				msg: fmt.Sprintf("Agent CLI response from %s is invalid: %v", target, err)}
		}
		return &reply{obj: obj, canon: canon}, nil
	case code == http.StatusUnauthorized:
		return nil, &cliError{code: ExitUnavailable, status: code,
			msg: fmt.Sprintf("Agent CLI authority is unavailable (HTTP 401 from %s)", target)}
	case code == http.StatusBadRequest || code == http.StatusConflict ||
		code == http.StatusRequestEntityTooLarge || code == http.StatusUnprocessableEntity:
		return nil, &cliError{code: ExitInvalid, status: code,
			msg: "Agent CLI request was rejected: " + errorDetail(code, data)}
	case code >= 300 && code < 400:
		return nil, &cliError{code: ExitUnavailable, status: code,
			msg: fmt.Sprintf("Agent CLI request to %s failed: HTTP %d redirect (redirects are not followed)", target, code)}
	default:
		return nil, &cliError{code: ExitUnavailable, status: code,
			msg: fmt.Sprintf("Agent CLI request to %s failed: HTTP %d: %s", target, code, errorDetail(code, data))}
	}
}

// errorDetail returns the detail of an error body {"detail": …}: the string itself, the
// canonical JSON of any other value, or the status text when the body has none.
func errorDetail(code int, data []byte) string {
	obj, err := canonjson.ParseObject(data)
	if err == nil {
		switch d := obj["detail"].(type) {
		case string:
			return d
		case nil:
		default:
			if b, err := canonjson.Marshal(d); err == nil {
				return string(b)
			}
		}
	}
	if text := http.StatusText(code); text != "" {
		return fmt.Sprintf("HTTP %d %s", code, text)
	}
	return fmt.Sprintf("HTTP %d", code)
}

// requestFailure describes a request that got no complete response. It names the URL and
// never the token (errors of net/http carry neither headers nor bodies).
func requestFailure(ctx context.Context, target string, timeout time.Duration, err error) *cliError {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case ctx.Err() != nil:
		return unavailablef("Agent CLI request to %s was interrupted", target)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return unavailablef("Agent CLI request to %s timed out after %s", target, timeout)
	default:
		return unavailablef("Agent CLI request to %s failed: %v", target, err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// formatSeconds writes d as decimal seconds with millisecond precision: "25", "1.5".
func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Milliseconds())/1000, 'f', -1, 64)
}
