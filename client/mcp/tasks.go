package mcp

import (
	"context"
	"net/http"
	"time"

	"github.com/turncli/turncli/client"
)

// This file is the Tasks extension of MCP 2026-07-28 (io.modelcontextprotocol/tasks, SEP-2663):
// a tools/call whose request declares the extension in its client capabilities is answered at
// once with a task, which tasks/get reads until it holds the call's result.
//
// A task is the call's receipt and nothing else: its id is the call id, and every task method
// reads the receipt with this command's grant, so a task is reachable only by what holds the
// grant and lives exactly as long as the receipt (until the response ends). The call id is a
// version 7 UUID: its first 48 bits are the task's creation time, the other 74 random, so the
// id is unguessable and createdAt needs nothing stored. Only lastUpdatedAt is remembered in
// the process (the first time it saw the receipt's current status), for want of anywhere else.
//
// How receipts map to tasks:
//
//   - queued, running and waiting are "working", with a statusMessage saying which. A receipt
//     waiting on a person is not "input_required": that status promises inputRequests the
//     client must answer with tasks/update, and the person answers elsewhere (an approval or
//     a question of the conversation), never through the MCP client.
//   - completed, failed and cancelled are "completed" with the CallToolResult the synchronous
//     tools/call would have given (isError for a failed or cancelled call): the extension keeps
//     "failed" for a JSON-RPC error, and a settled receipt is always a result.
//   - tasks/cancel is acknowledged, as the extension asks of a server that does not stop the
//     work: an Agent CLI call is never cancelled by its caller, so the task goes on to its end.
//   - An id that is not a task id of this server, or whose receipt the Agent CLI does not know
//     (another response's, or the response has ended), is -32602 "Task not found".
//
// permission_prompt is never a task: an engine's permission hook waits for its decision.

const (
	// tasksExtension names the extension in capabilities.
	tasksExtension = "io.modelcontextprotocol/tasks"
	// codeMissingCapability: a task method from a client whose request does not declare the
	// extension (MCP 2026-07-28, MissingRequiredClientCapabilityError).
	codeMissingCapability = -32021
	// taskTTL is a task's time to live: a response, and every receipt with it, lasts at most
	// 24 h (its grant's lifetime, Agent CLI contract section 10), counted from before the
	// call was made.
	taskTTL = 24 * time.Hour
	// taskPollInterval is the pause suggested between two tasks/get; each tasks/get already
	// waits for the call for up to taskWait.
	taskPollInterval = time.Second
	// taskWait is the longest a tasks/get waits for a call to settle before answering, well
	// under the request timeouts of MCP clients (60 s in the TypeScript SDK).
	taskWait = 5 * time.Second
	// taskNotFound is the message of an unknown task id, as the extension words it.
	taskNotFound = "Failed to retrieve task: Task not found"
)

// declaresTasks reports whether stateless request m declares the extension in its client
// capabilities.
func declaresTasks(m rpcMessage) bool {
	if !m.stateless {
		return false
	}
	meta, _ := m.params["_meta"].(map[string]any)
	caps, _ := meta[metaClientCapabilities].(map[string]any)
	extensions, _ := caps["extensions"].(map[string]any)
	_, ok := extensions[tasksExtension].(map[string]any)
	return ok
}

// isTaskMethod reports whether method belongs to the extension.
func isTaskMethod(method string) bool {
	return method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel"
}

// taskMethodError refuses a task method that m may not call: a handshake-era request (the
// extension is MCP 2026-07-28's), or a stateless one that does not declare the extension.
func taskMethodError(m rpcMessage) *rpcError {
	if !m.stateless {
		return &rpcError{code: codeMethodNotFound, message: "Method not found: " + m.method + " is part of the Tasks extension (" +
			tasksExtension + ") of MCP " + statelessVersion}
	}
	return &rpcError{code: codeMissingCapability, message: "Missing required client capability: " + m.method + " needs the " +
		tasksExtension + ` extension in _meta "` + metaClientCapabilities + `"`,
		data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}}}
}

// createTask answers a tools/call of ref with a task: the call is submitted, and its receipt
// becomes the task. What the synchronous answer would be is given instead when no call was
// admitted (a rejection) or its fate is unknown, as no task could then be read.
func (s *mcpServer) createTask(ctx context.Context, ref toolRef, args map[string]any) (any, *rpcError) {
	tr, rerr := s.connect()
	if rerr != nil {
		return nil, rerr
	}
	callID, err := s.agent.NewTimedCallID(s.now())
	if err != nil {
		return nil, &rpcError{code: codeInternalError, message: "cannot choose a call id: " + err.Error()}
	}
	r, err := tr.Post(ctx, map[string]any{
		"operation": "tools.call", "call_id": callID,
		"toolkit": ref.toolkit, "function": ref.function, "arguments": args,
	})
	if err != nil {
		e := asFailure(err)
		switch {
		case e.status == http.StatusUnauthorized:
			return nil, &rpcError{code: codeAuthority, message: e.msg}
		case e.code == client.ExitInvalid:
			return toolError(e.msg, callID), nil
		}
		return toolError(e.msg+"; the call may have been submitted: see mindroom-agent calls wait "+callID, callID), nil
	}
	status, err := r.Status()
	if err != nil {
		return toolError(err.Error()+"; the call may have been submitted: see mindroom-agent calls wait "+callID, callID), nil
	}
	created, _ := client.TimedCallIDTime(callID)
	s.mu.Lock()
	s.rememberLocked(callID, status, created) // the task's first status dates from its creation
	s.mu.Unlock()
	task := s.task(callID, status)
	task["resultType"] = "task"
	return task, nil
}

// taskMethod answers tasks/get, tasks/update and tasks/cancel of request m, which declares the
// extension.
func (s *mcpServer) taskMethod(ctx context.Context, m rpcMessage) (any, *rpcError) {
	id, ok := m.params["taskId"].(string)
	if !ok {
		return nil, invalidParams(m.method + ` needs "taskId", a string`)
	}
	if m.method == "tasks/update" {
		if v, present := m.params["inputResponses"]; present {
			if _, ok := v.(map[string]any); !ok {
				return nil, invalidParams(`"inputResponses" must be an object`)
			}
		}
	}
	if _, ok := client.TimedCallIDTime(id); !ok {
		return nil, invalidParams(taskNotFound)
	}
	tr, rerr := s.connect()
	if rerr != nil {
		return nil, rerr
	}
	wait := time.Duration(0)
	if m.method == "tasks/get" {
		wait = s.taskWait
	}
	r, err := tr.Get(ctx, id, wait)
	if err != nil {
		e := asFailure(err)
		if e.status == http.StatusUnauthorized {
			return nil, invalidParams(taskNotFound + " (no call of this response has that id, or the response has ended)")
		}
		out := &rpcError{code: codeAgentCLI, message: e.msg}
		if e.status != 0 {
			out.data = map[string]any{"status": e.status}
		}
		return nil, out
	}
	status, _ := r.Status()
	switch m.method {
	case "tasks/cancel":
		s.log.Info("acknowledged tasks/cancel of a call that goes on: Agent CLI calls are never cancelled by their caller", "call_id", id)
		return map[string]any{}, nil
	case "tasks/update":
		return map[string]any{}, nil // no task of this server ever asks the client for input
	}
	task := s.task(id, status)
	if client.IsTerminal(status) {
		run := callRun{callID: id, receipt: r, version: statelessVersion}
		task["result"] = callResult(r, statelessVersion)
		if isPermissionReceipt(r) {
			task["result"] = run.permissionAnswer()
		}
	}
	return task, nil
}

// isPermissionReceipt reports whether r is a receipt of permission_prompt, whose result is
// always a decision.
func isPermissionReceipt(r *client.Reply) bool {
	return r.Object()["toolkit"] == permissionPrompt.toolkit && r.Object()["function"] == permissionPrompt.function
}

// task is the Task of the receipt of callID, whose status is status (see the mapping above).
func (s *mcpServer) task(callID, status string) map[string]any {
	created, _ := client.TimedCallIDTime(callID)
	taskStatus, message := "working", "call "+callID+" is "+status
	switch {
	case client.IsTerminal(status):
		taskStatus = "completed"
	case status == client.StatusWaiting:
		message += " for a person to decide (an approval or an answer asked of the conversation's people)"
	}
	return map[string]any{
		"taskId":         callID,
		"status":         taskStatus,
		"statusMessage":  message,
		"createdAt":      timestamp(created),
		"lastUpdatedAt":  timestamp(s.statusSince(callID, status)),
		"ttlMs":          taskTTL.Milliseconds(),
		"pollIntervalMs": taskPollInterval.Milliseconds(),
	}
}

// statusSince returns when this process first saw the receipt of callID in status, and
// remembers it.
func (s *mcpServer) statusSince(callID, status string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seen, ok := s.taskSeen[callID]; ok && seen.status == status {
		return seen.since
	}
	since := s.now()
	s.rememberLocked(callID, status, since)
	return since
}

// rememberLocked records that the receipt of callID was in status at since. s.mu is held.
func (s *mcpServer) rememberLocked(callID, status string, since time.Time) {
	if s.taskSeen == nil {
		s.taskSeen = map[string]seenStatus{}
	}
	s.taskSeen[callID] = seenStatus{status: status, since: since}
}

// seenStatus is a receipt status and the first time this process saw it.
type seenStatus struct {
	status string
	since  time.Time
}

// timestamp is t as the extension writes times: ISO 8601, UTC, to the millisecond.
func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
