package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The app-server speaks JSON-RPC 2.0, one message per line, in both directions: the driver
// calls methods (initialize, thread/start, turn/start), the server sends notifications (the
// turn's progress) and requests of its own (approvals), which the driver answers.

// message is any JSON-RPC message: a request has ID and Method, a notification Method only, a
// response ID and Result or Error.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// errClosed: the server closed its output before answering.
var errClosed = errors.New("the app-server closed its output")

// rpcConn is the driver's side of the connection. Its methods may be called concurrently.
type rpcConn struct {
	wmu sync.Mutex // one message at a time on w
	w   io.Writer

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan message
	closed  bool
	// readErr is why reading stopped, when it was not the end of the output.
	readErr error
}

func newRPCConn(w io.Writer) *rpcConn {
	return &rpcConn{w: w, pending: map[int64]chan message{}}
}

func (c *rpcConn) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}

// call sends a request and waits for its response; result, when not nil, receives the result.
func (c *rpcConn) call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, c.closedErr())
	}
	c.nextID++
	id := c.nextID
	ch := make(chan message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case m, ok := <-ch:
		switch {
		case !ok:
			c.mu.Lock()
			why := c.closedErr()
			c.mu.Unlock()
			return fmt.Errorf("%s: %w", method, why)
		case m.Error != nil:
			return fmt.Errorf("%s: %w", method, m.Error)
		case result != nil:
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: reading the result: %w", method, err)
			}
		}
		return nil
	}
}

// closedErr is why no more responses come. The caller holds c.mu.
func (c *rpcConn) closedErr() error {
	if c.readErr != nil {
		return c.readErr
	}
	return errClosed
}

// notify sends a notification.
func (c *rpcConn) notify(method string, params any) error {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	return c.send(m)
}

// reply answers the server's request id with result, or with an error when msg is not empty.
func (c *rpcConn) reply(id json.RawMessage, result any, errMsg string) error {
	if errMsg != "" {
		return c.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": rpcError{Code: -32601, Message: errMsg}})
	}
	return c.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// readLoop reads the server's messages until r ends: responses go to their calls, requests to
// onRequest, notifications to onNotify, both in the order they came. It returns why reading
// stopped (nil at the end of the output) and fails every call still waiting.
func (c *rpcConn) readLoop(r io.Reader, onRequest, onNotify func(message)) (err error) {
	defer func() {
		c.mu.Lock()
		c.closed, c.readErr = true, err
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20) // a notification carries whole outputs and diffs
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("a line of the app-server's output is not JSON-RPC: %w", err)
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			onRequest(m)
		case m.Method != "":
			onNotify(m)
		case len(m.ID) > 0:
			var id int64
			if json.Unmarshal(m.ID, &id) != nil {
				continue // not one of ours
			}
			c.mu.Lock()
			ch := c.pending[id]
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
	return sc.Err()
}
