package mcp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/internal/canonjson"
)

// This file is the MCP side of `mindroom-agent mcp`: tools/list and tools/call translated to
// Agent CLI operations. Which revision a request speaks is decided in revisions.go.

const (
	mcpServerName    = "mindroom-agent"
	mcpServerVersion = "1"
	// mcpCursorPrefix marks the cursors this server issues: the Agent CLI's next_cursor after it.
	mcpCursorPrefix = "agent-cli:"
	// maxReadLimit is the largest context.read page, in code points.
	maxReadLimit = 65536
	// maxContextBytes bounds a descriptor read back from a context document.
	maxContextBytes = 16 << 20
	// describeParallelism bounds the describes of one listing in flight at once (each is an
	// admitted operation of the response, which allows 64).
	describeParallelism = 4
	// metaCallID and metaStatus are the _meta keys of a tools/call result.
	metaCallID = "mindroom-agent/call_id"
	metaStatus = "mindroom-agent/status"
)

const mcpInstructions = "These are the tools of one agent response, served through its Agent CLI with the grant and window " +
	"of the Bash command that started this server. TOOLKIT__FUNCTION is the Agent CLI function TOOLKIT.FUNCTION; " +
	"functions of the interaction toolkit keep their bare names. Every call is an Agent CLI call with its own call id, " +
	"receipt, limits and approvals, and calls are refused once that Bash command has ended."

// agentMethod answers tools/list, tools/call and the task methods, in the revision m speaks.
func (s *mcpServer) agentMethod(ctx context.Context, m rpcMessage) (any, *rpcError) {
	switch m.method {
	case "tools/list":
		return s.toolsList(ctx, m.params, m.version)
	case "tools/call":
		return s.toolsCall(ctx, m)
	}
	return s.taskMethod(ctx, m)
}

// connect validates the environment and returns the connection to the Agent CLI.
func (s *mcpServer) connect() (*client.Conn, *rpcError) {
	tr, err := s.agent.Connect()
	if err != nil {
		return nil, &rpcError{code: codeAuthority, message: err.Error()}
	}
	return tr, nil
}

// failure is the error of an Agent CLI request as package client classifies it.
type failure struct {
	code   int // client.ExitInvalid for a rejection, client.ExitUnavailable otherwise
	status int // the HTTP status that caused it; 0 when no response came
	msg    string
}

func asFailure(err error) failure {
	code, status := client.ErrorKind(err)
	return failure{code: code, status: status, msg: err.Error()}
}

func invalidResponse(format string, args ...any) error {
	return fmt.Errorf("Agent CLI response is invalid: "+format, args...)
}

// discoveryError is the JSON-RPC error of a failed Agent CLI request made for tools/list (or
// to resolve a tool name).
func discoveryError(err error) *rpcError {
	e := asFailure(err)
	if e.status == http.StatusUnauthorized {
		return &rpcError{code: codeAuthority, message: e.msg}
	}
	r := &rpcError{code: codeAgentCLI, message: e.msg}
	if e.status != 0 {
		r.data = map[string]any{"status": e.status}
	}
	return r
}

// toolsList answers tools/list: the whole catalog, or with --page-size one Agent CLI page.
func (s *mcpServer) toolsList(ctx context.Context, params map[string]any, version string) (any, *rpcError) {
	var cursor *string
	switch c := params["cursor"].(type) {
	case nil:
	case string:
		inner, ok := strings.CutPrefix(c, mcpCursorPrefix)
		if !ok || inner == "" {
			return nil, invalidParams("Invalid cursor: it is not a nextCursor of this server")
		}
		cursor = &inner
	default:
		return nil, invalidParams(`"cursor" must be a string`)
	}
	tr, rerr := s.connect()
	if rerr != nil {
		return nil, rerr
	}
	limit := client.MaxListLimit
	if s.pageSize > 0 {
		limit = s.pageSize
	}
	tools := []any{}
	for {
		infos, next, err := s.catalogPage(ctx, tr, cursor, limit)
		if err != nil {
			return nil, discoveryError(err)
		}
		for _, info := range infos {
			tools = append(tools, info.mcpTool(s.names.name(info.ref), version))
		}
		switch {
		case next == nil:
			return map[string]any{"tools": tools}, nil
		case s.pageSize > 0:
			return map[string]any{"tools": tools, "nextCursor": mcpCursorPrefix + *next}, nil
		}
		cursor = next
	}
}

// catalogPage reads the tools.list page at cursor and describes its functions. A deferred
// toolkit on the page is loaded (see client.Conn.LoadToolkit) and the page read again, so that its
// functions take its place; one that stays deferred is left out.
func (s *mcpServer) catalogPage(ctx context.Context, tr *client.Conn, cursor *string, limit int) ([]*toolInfo, *string, error) {
	tried := map[string]string{} // deferred toolkits loaded in this call → why not, if known
	for {
		items, next, err := tr.ListPage(ctx, cursor, limit)
		if err != nil {
			return nil, nil, err
		}
		var refs []toolRef
		var load []string
		for _, it := range items {
			why, triedIt := tried[it.Toolkit]
			switch {
			case !it.Deferred:
				refs = append(refs, toolRef{it.Toolkit, it.Function})
			case !triedIt:
				load = append(load, it.Toolkit)
			default:
				s.log.Warn("left out a deferred toolkit that did not load", "toolkit", it.Toolkit, "detail", why)
			}
		}
		if len(load) == 0 {
			infos, err := s.describeAll(ctx, tr, refs)
			return infos, next, err
		}
		for _, toolkit := range load {
			why, err := tr.LoadToolkit(ctx, toolkit)
			if err != nil {
				return nil, nil, err
			}
			tried[toolkit] = why
		}
	}
}

// toolInfo is what tools/list shows of a function, taken from its descriptor.
type toolInfo struct {
	ref          toolRef
	description  string
	instructions []string
	inputSchema  any
}

// mcpTool is the tools/list entry of the function.
func (t *toolInfo) mcpTool(name, version string) map[string]any {
	desc := t.description
	if len(t.instructions) > 0 {
		desc = strings.TrimSpace(desc + "\n\n" + strings.Join(t.instructions, "\n"))
	}
	tool := map[string]any{"name": name, "description": desc, "inputSchema": t.inputSchema}
	if version >= "2025-06-18" {
		tool["title"] = t.ref.String()
	}
	if version >= annotationsSince {
		tool["annotations"] = toolAnnotations(t.ref)
	}
	if version == coreTasksVersion && t.ref != permissionPrompt {
		tool["execution"] = map[string]any{"taskSupport": "optional"} // tasks.go
	}
	return tool
}

// describeAll describes refs (from the cache when it can), a few at a time, in order. A
// function whose describe is rejected with 422 (it went away, or its toolkit cannot load) is
// left out; any other failure fails the listing.
func (s *mcpServer) describeAll(ctx context.Context, tr *client.Conn, refs []toolRef) ([]*toolInfo, error) {
	infos := make([]*toolInfo, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, describeParallelism)
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			infos[i], errs[i] = s.describe(ctx, tr, ref)
		})
	}
	wg.Wait()
	out := make([]*toolInfo, 0, len(refs))
	for i, err := range errs {
		if err == nil {
			out = append(out, infos[i])
			continue
		}
		if e := asFailure(err); e.status == http.StatusUnprocessableEntity {
			s.log.Warn("left out a function whose describe was rejected", "tool", refs[i].String(), "detail", e.msg)
			continue
		}
		return nil, err
	}
	return out, nil
}

// describe returns the function's descriptor, reading it once per process.
func (s *mcpServer) describe(ctx context.Context, tr *client.Conn, ref toolRef) (*toolInfo, error) {
	s.infoMu.Lock()
	info := s.infos[ref]
	s.infoMu.Unlock()
	if info != nil {
		return info, nil
	}
	r, err := tr.Post(ctx, map[string]any{"operation": "tools.describe", "toolkit": ref.toolkit, "function": ref.function})
	if err != nil {
		return nil, err
	}
	desc := r.Object()
	if pointer, ok := desc["context"].(map[string]any); ok {
		name, _ := pointer["name"].(string)
		if name == "" {
			return nil, invalidResponse("the descriptor of %s points to a context document without a name", ref)
		}
		text, err := readContext(ctx, tr, name)
		if err != nil {
			return nil, err
		}
		if desc, err = canonjson.ParseObject([]byte(text)); err != nil {
			return nil, invalidResponse("context document %s is not a descriptor: %v", name, err)
		}
	}
	info = &toolInfo{ref: ref, inputSchema: objectSchema(desc["input_schema"])}
	info.description, _ = desc["description"].(string)
	instructions, _ := desc["instructions"].([]any)
	for _, v := range instructions {
		if text, ok := v.(string); ok && strings.TrimSpace(text) != "" {
			info.instructions = append(info.instructions, text)
		}
	}
	s.infoMu.Lock()
	if s.infos == nil {
		s.infos = map[toolRef]*toolInfo{}
	}
	s.infos[ref] = info
	s.infoMu.Unlock()
	return info, nil
}

// objectSchema returns an input schema MCP clients accept: a JSON object whose type is set
// (clients such as the TypeScript SDK require "type":"object" at the top). Arguments are
// always an object, so adding the type changes nothing a call may send.
func objectSchema(v any) any {
	schema, ok := v.(map[string]any)
	if !ok {
		return map[string]any{"type": "object"}
	}
	if _, typed := schema["type"]; typed {
		return schema
	}
	withType := make(map[string]any, len(schema)+1)
	for k, v := range schema {
		withType[k] = v
	}
	withType["type"] = "object"
	return withType
}

// readContext reads a whole context document, page after page.
func readContext(ctx context.Context, tr *client.Conn, name string) (string, error) {
	var text strings.Builder
	offset := int64(0)
	for {
		r, err := tr.Post(ctx, map[string]any{"operation": "context.read", "name": name, "offset": offset, "limit": maxReadLimit})
		if err != nil {
			return "", err
		}
		page, ok := r.Object()["text"].(string)
		if !ok {
			return "", invalidResponse("context.read of %s has no text", name)
		}
		if text.WriteString(page); text.Len() > maxContextBytes {
			return "", invalidResponse("context document %s exceeds %d bytes", name, maxContextBytes)
		}
		switch next := r.Object()["next_offset"].(type) {
		case nil:
			return text.String(), nil
		case canonjson.Number:
			n, ok := next.Int64()
			if !ok || n <= offset {
				return "", invalidResponse("context.read of %s does not move forward", name)
			}
			offset = n
		default:
			return "", invalidResponse("context.read of %s has a next_offset that is not a number", name)
		}
	}
}

// resolve finds the function an MCP tool name stands for. A hashed name the process has not
// listed is looked for in the catalog's listing (tools.list only: no describe, no window).
func (s *mcpServer) resolve(ctx context.Context, name string) (toolRef, *rpcError) {
	if ref, ok := s.names.lookup(name); ok {
		return ref, nil
	}
	if strings.HasPrefix(name, "_") {
		if rerr := s.learnNames(ctx); rerr != nil {
			return toolRef{}, rerr
		}
		if ref, ok := s.names.lookup(name); ok {
			return ref, nil
		}
	}
	return toolRef{}, invalidParams("Unknown tool: " + name)
}

// learnNames names every prepared function of the catalog.
func (s *mcpServer) learnNames(ctx context.Context) *rpcError {
	tr, rerr := s.connect()
	if rerr != nil {
		return rerr
	}
	var cursor *string
	for {
		items, next, err := tr.ListPage(ctx, cursor, client.MaxListLimit)
		if err != nil {
			return discoveryError(err)
		}
		for _, it := range items {
			if !it.Deferred {
				s.names.name(toolRef{it.Toolkit, it.Function})
			}
		}
		if next == nil {
			return nil
		}
		cursor = next
	}
}

// toolsCall answers tools/call: one Agent CLI call with a fresh call id, waited for until it
// is terminal. Only an unusable request, an unknown name and an unavailable authority are
// JSON-RPC errors; everything else is a result the model sees, isError when it did not work.
// permission_prompt always answers with a decision (see permissionAnswer). A request that
// declares the Tasks extension is answered with a task instead (tasks.go).
func (s *mcpServer) toolsCall(ctx context.Context, m rpcMessage) (any, *rpcError) {
	params, version := m.params, m.version
	name, ok := params["name"].(string)
	if !ok || name == "" {
		return nil, invalidParams(`tools/call needs "name", a string`)
	}
	args := map[string]any{}
	switch a := params["arguments"].(type) {
	case nil:
	case map[string]any:
		args = a
	default:
		return nil, invalidParams(`"arguments" must be an object`)
	}
	ref, rerr := s.resolve(ctx, name)
	if rerr != nil {
		return nil, rerr
	}
	coreTask, rerr := coreTaskParam(m)
	switch {
	case rerr != nil:
		return nil, rerr
	case coreTask && ref == permissionPrompt:
		return nil, &rpcError{code: codeMethodNotFound, message: "Method not found: " + name +
			` cannot be called as a task (its "taskSupport" is "forbidden"): a permission hook waits for its decision`}
	case coreTask || declaresTasks(m) && ref != permissionPrompt:
		return s.createTask(withMetaTrace(ctx, params), ref, args, m)
	}
	run := s.runCall(withMetaTrace(ctx, params), ref, args, params, version)
	if ref == permissionPrompt {
		return run.permissionAnswer(), nil
	}
	return run.answer()
}

// callRun is how one tools/call went: its terminal receipt, or what stopped it, said twice:
// as the answer of an ordinary call, and as the reason a permission_prompt got no decision.
type callRun struct {
	callID  string        // empty when none could be chosen
	receipt *client.Reply // the terminal receipt; nil when the call did not settle here
	version string
	// For an ordinary call that did not settle: a JSON-RPC error, or the text of an error
	// result.
	rpcErr  *rpcError
	toolMsg string
	// reason says, for people and models, why no decision could be had.
	reason string
}

// runCall submits the call and waits until its receipt is terminal.
func (s *mcpServer) runCall(ctx context.Context, ref toolRef, args, params map[string]any, version string) callRun {
	run := callRun{version: version}
	tr, rerr := s.connect()
	if rerr != nil {
		run.rpcErr, run.reason = rerr, notGranted("nobody could be asked", rerr.message)
		return run
	}
	callID, err := s.agent.NewCallID()
	if err != nil {
		run.rpcErr = &rpcError{code: codeInternalError, message: "cannot choose a call id: " + err.Error()}
		run.reason = notGranted("nobody could be asked", run.rpcErr.message)
		return run
	}
	run.callID = callID
	r, err := tr.Post(ctx, map[string]any{
		"operation": "tools.call", "call_id": callID,
		"toolkit": ref.toolkit, "function": ref.function, "arguments": args,
	})
	if err != nil {
		e := asFailure(err)
		switch {
		case ctx.Err() != nil:
			run.reason = stoppedReason
		case e.status == http.StatusUnauthorized || e.code == client.ExitInvalid:
			run.reason = notGranted("the request for permission was refused", e.msg)
		default:
			run.reason = notGranted("the request for permission could not be sent", e.msg)
		}
		switch {
		case e.status == http.StatusUnauthorized:
			run.rpcErr = &rpcError{code: codeAuthority, message: e.msg}
		case e.code == client.ExitInvalid: // rejected: nothing was admitted
			run.toolMsg = e.msg
		default:
			run.toolMsg = fmt.Sprintf("%s; the call may have been submitted: see mindroom-agent calls wait %s", e.msg, callID)
		}
		return run
	}
	status, err := r.Status()
	if err != nil {
		run.toolMsg = fmt.Sprintf("%v; the call may have been submitted: see mindroom-agent calls wait %s", err, callID)
		run.reason = notGranted("the answer to the request could not be read", err.Error())
		return run
	}
	progress := newProgress(s, params, run.version)
	for !client.IsTerminal(status) {
		last, err := tr.Wait(ctx, callID, r, time.Now().Add(s.round))
		if err != nil {
			e := asFailure(err)
			run.reason = notGranted("waiting for the decision failed", e.msg)
			if ctx.Err() != nil {
				run.reason = stoppedReason
			}
			if e.status == http.StatusUnauthorized {
				run.rpcErr = &rpcError{code: codeAuthority, message: e.msg}
				return run
			}
			st, _ := last.Status()
			run.toolMsg = fmt.Sprintf("%s; waiting stopped while the call was %s and it may still finish: see mindroom-agent calls wait %s", e.msg, st, callID)
			return run
		}
		r = last
		if status, err = r.Status(); err != nil {
			run.toolMsg = err.Error()
			run.reason = notGranted("the answer to the request could not be read", err.Error())
			return run
		}
		if !client.IsTerminal(status) {
			progress.report(callID, status)
		}
	}
	run.receipt = r
	return run
}

// answer is the tools/call answer of an ordinary call.
func (run callRun) answer() (any, *rpcError) {
	switch {
	case run.receipt != nil:
		return callResult(run.receipt, run.version), nil
	case run.rpcErr != nil:
		return nil, run.rpcErr
	}
	return toolError(run.toolMsg, run.callID), nil
}

// callResult is the tools/call result of a terminal receipt.
func callResult(r *client.Reply, version string) map[string]any {
	status, _ := r.Object()["status"].(string)
	outcome := r.Object()["outcome"]
	completed := status == client.StatusCompleted
	content := []any{textContent(outcomeText(outcome, status))}
	if attachments, _ := r.Object()["attachments"].([]any); len(attachments) > 0 {
		b, _ := canonjson.Marshal(map[string]any{"attachments": attachments})
		content = append(content, textContent(string(b)))
	}
	res := map[string]any{
		"content": content,
		"isError": !completed,
		"_meta":   map[string]any{metaCallID: r.Object()["call_id"], metaStatus: status},
	}
	if obj, isObject := outcome.(map[string]any); isObject && completed && version >= "2025-06-18" {
		res["structuredContent"] = obj
	}
	return res
}

// outcomeText is the text a model reads of an outcome: a string as it is (an error message,
// or a JSON text such as a permission decision), anything else as canonical JSON.
func outcomeText(outcome any, status string) string {
	switch o := outcome.(type) {
	case string:
		return o
	case nil:
		if status != client.StatusCompleted {
			return "Call " + status
		}
	}
	b, err := canonjson.Marshal(outcome)
	if err != nil {
		return fmt.Sprintf("Call %s with an outcome that cannot be shown: %v", status, err)
	}
	return string(b)
}

// toolError is a tools/call result reporting what went wrong to the model.
func toolError(msg, callID string) map[string]any {
	return map[string]any{
		"content": []any{textContent(msg)},
		"isError": true,
		"_meta":   map[string]any{metaCallID: callID},
	}
}

func textContent(text string) map[string]any {
	return map[string]any{"type": "text", "text": text}
}

// withMetaTrace returns ctx carrying the trace context an engine put in the request's _meta
// (traceparent and tracestate, as MCP's SEP-414 proposes), which the call's Agent CLI requests
// then send instead of the shell's; ctx as it is when there is none.
func withMetaTrace(ctx context.Context, params map[string]any) context.Context {
	meta, _ := params["_meta"].(map[string]any)
	parent, _ := meta["traceparent"].(string)
	state, _ := meta["tracestate"].(string)
	return client.WithTrace(ctx, parent, state)
}

// progress sends notifications/progress for a call whose request asked for them.
type progress struct {
	s       *mcpServer
	token   any // string or canonjson.Number; nil: not asked
	version string
	n       int
}

func newProgress(s *mcpServer, params map[string]any, version string) *progress {
	p := &progress{s: s, version: version}
	if meta, ok := params["_meta"].(map[string]any); ok {
		switch t := meta["progressToken"].(type) {
		case string, canonjson.Number:
			p.token = t
		}
	}
	return p
}

func (p *progress) report(callID, status string) {
	if p.token == nil {
		return
	}
	p.n++
	params := map[string]any{"progressToken": p.token, "progress": p.n}
	if p.version >= "2025-03-26" {
		params["message"] = "call " + callID + " is " + status
	}
	p.s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
}
