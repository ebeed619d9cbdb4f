package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/internal/canonjson"
)

// This file is the JSON-RPC 2.0 side of `mindroom-agent mcp`: MCP's stdio transport, one
// message per line in each direction (no embedded newlines: every line written is canonical
// JSON), nothing but messages on stdout, logs on stderr. Requests that reach the Agent CLI
// (tools/list, tools/call and the task methods) run concurrently, each in its own goroutine,
// so a long call never holds up a ping or another call; everything else is answered in
// arrival order.

// JSON-RPC error codes. -32000 to -32099 are the implementation's own.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	// codeAuthority: the Agent CLI authority is unavailable (environment missing or invalid,
	// HTTP 401: the response has ended).
	codeAuthority = -32001
	// codeAgentCLI: an Agent CLI request made for discovery was rejected (its HTTP status is in
	// the error's data) or got no valid answer.
	codeAgentCLI = -32002
	// codeUnsupportedVersion: a request names in _meta a revision this server does not serve
	// (MCP 2026-07-28, UnsupportedProtocolVersionError; data lists the revisions served).
	codeUnsupportedVersion = -32022
)

// maxMessageBytes bounds one incoming line; a longer one is discarded and answered with a
// parse error.
const maxMessageBytes = 1 << 20

// errOutputFailed ends serving when stdout can no longer be written: the client has gone.
var errOutputFailed = errors.New("standard output failed")

// rpcError is a JSON-RPC error object.
type rpcError struct {
	code    int
	message string
	data    map[string]any
}

func (e *rpcError) object() map[string]any {
	o := map[string]any{"code": e.code, "message": e.message}
	if e.data != nil {
		o["data"] = e.data
	}
	return o
}

func invalidRequest(msg string) *rpcError { return &rpcError{code: codeInvalidRequest, message: msg} }
func invalidParams(msg string) *rpcError  { return &rpcError{code: codeInvalidParams, message: msg} }

type messageKind int

const (
	kindRequest messageKind = iota
	kindNotification
	kindResponse
)

// rpcMessage is one incoming JSON-RPC message.
type rpcMessage struct {
	kind   messageKind
	id     any // string or canonjson.Number; nil when absent or invalid
	method string
	params map[string]any
	// version is the MCP revision a well-formed request speaks, and stateless whether that
	// is 2026-07-28, whose requests need no initialize (see revisionOf).
	version   string
	stateless bool
}

// parseMessage checks the shape of one message. With an error, kind tells whether it is
// answered: requests and malformed messages are (with a null id when none is usable),
// notifications never.
func parseMessage(obj map[string]any) (rpcMessage, *rpcError) {
	m := rpcMessage{kind: kindRequest}
	id, hasID := obj["id"]
	if hasID {
		switch id.(type) {
		case string, canonjson.Number:
			m.id = id
		default:
			return m, invalidRequest(`"id" must be a string or a number`)
		}
	}
	if v, _ := obj["jsonrpc"].(string); v != "2.0" {
		return m, invalidRequest(`"jsonrpc" must be "2.0"`)
	}
	method, hasMethod := obj["method"]
	if !hasMethod {
		_, isResult := obj["result"]
		_, isError := obj["error"]
		if hasID && (isResult || isError) {
			m.kind = kindResponse
			return m, nil
		}
		return m, invalidRequest(`missing "method"`)
	}
	name, ok := method.(string)
	if !ok {
		return m, invalidRequest(`"method" must be a string`)
	}
	m.method = name
	if !hasID {
		m.kind = kindNotification
	}
	switch p := obj["params"].(type) {
	case nil:
		m.params = map[string]any{}
	case map[string]any:
		m.params = p
	default:
		return m, invalidParams(`"params" must be an object`)
	}
	return m, nil
}

// rpcReply builds the response to a request: its result, or err.
func rpcReply(id, result any, err *rpcError) map[string]any {
	r := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		r["error"] = err.object()
	} else {
		r["result"] = result
	}
	return r
}

// mcpServer serves one MCP session over stdin/stdout.
type mcpServer struct {
	agent    *client.Agent
	pageSize int           // tools per tools/list page; 0: the whole catalog in one page
	round    time.Duration // longest wait for a call between two progress notifications
	taskWait time.Duration // longest wait of a tasks/get for its call to settle
	now      func() time.Time
	log      *slog.Logger

	out    io.Writer
	outMu  sync.Mutex
	outErr bool                    // stdout failed; nothing more is written
	stop   context.CancelCauseFunc // ends serving

	handlers sync.WaitGroup // goroutines answering requests

	mu       sync.Mutex
	version  string                 // revision initialize chose; empty before initialize
	inflight map[string]*inflightID // requests a notifications/cancelled may cancel, by idKey
	// taskSeen is, by task id, the receipt status this process last saw and since when: a
	// task's lastUpdatedAt (tasks.go). It holds only ids of receipts the Agent CLI answered,
	// so at most the response's receipts.
	taskSeen map[string]seenStatus

	names  toolNames
	infoMu sync.Mutex
	infos  map[toolRef]*toolInfo // descriptors already read, for the life of the process
}

type inflightID struct{ cancel context.CancelCauseFunc }

// input is one line read from stdin.
type input struct {
	line    []byte
	tooLong bool
	err     error // reading failed (not EOF)
}

// serve answers messages until stdin ends (after the requests in progress are answered), ctx
// ends or stdout fails, and returns the exit code.
func (s *mcpServer) serve(ctx context.Context, in io.Reader) int {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s.stop = stop
	inputs := make(chan input)
	go readMessages(ctx, in, inputs)
	code := client.ExitCompleted
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case in, ok := <-inputs:
			if !ok {
				break loop
			}
			if in.err != nil {
				s.log.Error("cannot read standard input", "error", in.err)
				code = client.ExitUnavailable
				break loop
			}
			s.receive(ctx, in)
		}
	}
	s.handlers.Wait()
	if errors.Is(context.Cause(ctx), errOutputFailed) {
		return client.ExitUnavailable
	}
	return code
}

// readMessages sends each non-blank line of r to out and closes out at the end of r. It stops
// early when ctx ends.
func readMessages(ctx context.Context, r io.Reader, out chan<- input) {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br)
		if tooLong || len(bytes.TrimSpace(line)) > 0 {
			select {
			case out <- input{line: line, tooLong: tooLong}:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				select {
				case out <- input{err: err}:
				case <-ctx.Done():
				}
			}
			return
		}
	}
}

// readLine reads one line without its line end ("\n" or "\r\n"). A line longer than
// maxMessageBytes is read to its end and dropped: tooLong reports it.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong && len(line)+len(chunk) > maxMessageBytes+2 {
			tooLong, line = true, nil
		}
		if !tooLong {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > maxMessageBytes { // within the room for "\r\n", but the line itself is over
			return nil, true, err
		}
		return line, false, err
	}
}

// job is the work one incoming message asks for: a reply ready at once, or run, which
// answers in its own goroutine (ok false: nothing to send).
type job struct {
	reply map[string]any
	run   func() (reply map[string]any, ok bool)
}

// receive handles one line: a message or a batch of them.
func (s *mcpServer) receive(ctx context.Context, in input) {
	if in.tooLong {
		s.send(rpcReply(nil, nil, &rpcError{code: codeParseError, message: fmt.Sprintf("Parse error: a message exceeds %d bytes", maxMessageBytes)}))
		return
	}
	v, err := canonjson.Parse(in.line)
	if err != nil {
		s.send(rpcReply(nil, nil, &rpcError{code: codeParseError, message: "Parse error: " + err.Error()}))
		return
	}
	batch, isBatch := v.([]any)
	if !isBatch {
		j := s.prepare(ctx, v)
		switch {
		case j.run != nil:
			s.spawn(func() {
				if r, ok := j.run(); ok {
					s.send(r)
				}
			})
		case j.reply != nil:
			s.send(j.reply)
		}
		return
	}
	// A batch (JSON-RPC 2.0; MCP 2025-03-26) is answered with one array once all its
	// requests are done, leaving out notifications.
	if len(batch) == 0 {
		s.send(rpcReply(nil, nil, invalidRequest("a batch must not be empty")))
		return
	}
	jobs := make([]job, len(batch))
	for i, v := range batch {
		jobs[i] = s.prepare(ctx, v)
	}
	s.spawn(func() {
		replies := make([]map[string]any, len(jobs))
		var wg sync.WaitGroup
		for i, j := range jobs {
			if j.run == nil {
				replies[i] = j.reply
				continue
			}
			wg.Go(func() {
				if r, ok := j.run(); ok {
					replies[i] = r
				}
			})
		}
		wg.Wait()
		var out []any
		for _, r := range replies {
			if r != nil {
				out = append(out, r)
			}
		}
		if len(out) > 0 {
			s.send(out)
		}
	})
}

// prepare decodes one message and either answers it at once (initialize, ping,
// server/discover, errors), acts on it (notifications) or returns the work that answers it
// (tools/list, tools/call and the task methods).
func (s *mcpServer) prepare(ctx context.Context, v any) job {
	obj, ok := v.(map[string]any)
	if !ok {
		return job{reply: rpcReply(nil, nil, invalidRequest("a message must be a JSON object"))}
	}
	m, rerr := parseMessage(obj)
	switch {
	case m.kind == kindResponse: // this server sends no requests; stray responses are ignored
		return job{}
	case rerr != nil && m.kind == kindNotification:
		s.log.Warn("ignored a malformed notification", "method", m.method, "error", rerr.message)
		return job{}
	case rerr != nil:
		return job{reply: rpcReply(m.id, nil, rerr)}
	case m.kind == kindNotification:
		s.notification(m)
		return job{}
	}
	if m.version, m.stateless, rerr = s.revisionOf(m); rerr != nil {
		return job{reply: rpcReply(m.id, nil, rerr)}
	}
	if isTaskMethod(m.method) {
		if rerr := taskMethodError(m); rerr != nil {
			return job{reply: rpcReply(m.id, nil, rerr)}
		}
	}
	switch m.method {
	case "tools/list", "tools/call", "tasks/get", "tasks/update", "tasks/cancel", "tasks/result":
		rctx, done := s.track(ctx, m.id)
		return job{run: func() (map[string]any, bool) {
			defer done()
			res, rerr := s.agentMethod(rctx, m)
			// Cancelled by the client: no answer is due. Stopping: only a permission_prompt
			// is answered, with its denial, so that the engine waiting on it is not left
			// without a decision.
			if rctx.Err() != nil && (errors.Is(context.Cause(rctx), errCancelledByClient) || !s.isPermissionCall(m)) {
				return nil, false
			}
			return m.reply(res, rerr), true
		}}
	}
	res, rerr := s.localMethod(m)
	return job{reply: m.reply(res, rerr)}
}

// reply builds the response to request m: its result as its revision shapes results, or err.
func (m rpcMessage) reply(result any, err *rpcError) map[string]any {
	if m.stateless && err == nil {
		result = statelessResult(result)
	}
	return rpcReply(m.id, result, err)
}

// errCancelledByClient is the cause of a request's context that notifications/cancelled ended.
var errCancelledByClient = errors.New("cancelled by the client")

// isPermissionCall reports whether m calls permission_prompt.
func (s *mcpServer) isPermissionCall(m rpcMessage) bool {
	name, _ := m.params["name"].(string)
	ref, ok := s.names.lookup(name)
	return m.method == "tools/call" && ok && ref == permissionPrompt
}

// track registers a request that notifications/cancelled may cancel. done unregisters it.
func (s *mcpServer) track(ctx context.Context, id any) (context.Context, func()) {
	rctx, cancel := context.WithCancelCause(ctx)
	key, entry := idKey(id), &inflightID{cancel: cancel}
	s.mu.Lock()
	if s.inflight == nil {
		s.inflight = map[string]*inflightID{}
	}
	s.inflight[key] = entry
	s.mu.Unlock()
	return rctx, func() {
		s.mu.Lock()
		if s.inflight[key] == entry {
			delete(s.inflight, key)
		}
		s.mu.Unlock()
		cancel(nil)
	}
}

// notification acts on a notification. Only notifications/cancelled does anything: it stops
// waiting for the request it names, whose answer is then never sent. It never cancels an
// Agent CLI call, which keeps running and keeps its receipt.
func (s *mcpServer) notification(m rpcMessage) {
	if m.method != "notifications/cancelled" {
		return // notifications/initialized and everything else need nothing
	}
	id := m.params["requestId"]
	s.mu.Lock()
	if entry := s.inflight[idKey(id)]; entry != nil {
		entry.cancel(errCancelledByClient)
	}
	s.mu.Unlock()
}

// idKey tells request ids apart: the string "1" and the number 1 are different ids.
func idKey(id any) string {
	b, _ := canonjson.Marshal(id)
	return string(b)
}

func (s *mcpServer) spawn(f func()) {
	s.handlers.Go(f)
}

// send writes one message as one line. Once stdout fails, it stops serving and writes no more.
func (s *mcpServer) send(msg any) {
	line, err := canonjson.Marshal(msg)
	if err != nil {
		s.log.Error("cannot encode a message", "error", err)
		r, isReply := msg.(map[string]any)
		if !isReply {
			return
		}
		line, _ = canonjson.Marshal(rpcReply(r["id"], nil, &rpcError{code: codeInternalError, message: "Internal error: the answer cannot be encoded as JSON"}))
	}
	line = append(line, '\n')
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.outErr {
		return
	}
	if _, err := s.out.Write(line); err != nil {
		s.outErr = true
		s.log.Error("cannot write standard output", "error", err)
		s.stop(errOutputFailed)
	}
}
