package mcp

import (
	"context"
	"net/http"
	"time"

	"github.com/turncli/turncli/client"
)

// This file is MCP's tasks, in both eras that have them:
//
//   - the Tasks extension of 2026-07-28 (io.modelcontextprotocol/tasks, SEP-2663): a tools/call
//     whose request declares the extension in its client capabilities is answered at once with
//     a task ("resultType":"task"), which tasks/get reads until it holds the call's result;
//   - the experimental tasks of 2025-11-25: initialize declares tasks for tools/call, each tool
//     but permission_prompt says "taskSupport":"optional", a tools/call with a "task" param is
//     answered at once with {"task":…}, tasks/get reads its status and tasks/result waits for
//     its result. tasks/list and tasks/cancel are not declared, so not served: a task is a
//     receipt, which the Agent CLI neither lists nor cancels.
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
//   - queued, running and waiting are "working", with a statusMessage saying which (and a task
//     of 2025-11-25 is "working" when created, as that revision requires). A receipt
//     waiting on a person is not "input_required": that status promises inputRequests the
//     client must answer with tasks/update, and the person answers elsewhere (an approval or
//     a question of the conversation), never through the MCP client.
//   - In 2026-07-28, completed, failed and cancelled are "completed" with the CallToolResult the
//     synchronous tools/call would have given (isError for a failed or cancelled call): the
//     extension keeps "failed" for a JSON-RPC error, and a settled receipt is always a result.
//     In 2025-11-25 they are "completed", "failed" (which there includes an isError result) and
//     "cancelled", and tasks/result gives that CallToolResult.
//   - tasks/cancel of 2026-07-28 is acknowledged, as the extension asks of a server that does
//     not stop the work: an Agent CLI call is never cancelled by its caller, so the task goes on
//     to its end.
//   - An id that is not a task id of this server, or whose receipt the Agent CLI does not know
//     (another response's, or the response has ended), is -32602 "Task not found".
//
// permission_prompt is never a task: an engine's permission hook waits for its decision.

const (
	// tasksExtension names the extension in capabilities.
	tasksExtension = "io.modelcontextprotocol/tasks"
	// coreTasksVersion is the handshake revision with tasks of its own.
	coreTasksVersion = "2025-11-25"
	// metaRelatedTask names, in the _meta of a tasks/result of 2025-11-25, the task it is of.
	metaRelatedTask = "io.modelcontextprotocol/related-task"
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
	return metaDeclaresTasks(meta)
}

// metaDeclaresTasks reports whether a stateless request's _meta declares the extension in its
// client capabilities.
func metaDeclaresTasks(meta map[string]any) bool {
	caps, _ := meta[metaClientCapabilities].(map[string]any)
	extensions, _ := caps["extensions"].(map[string]any)
	_, ok := extensions[tasksExtension].(map[string]any)
	return ok
}

// missingTasks is the error of a task method from a stateless request that does not declare
// the extension.
func missingTasks(method string) *rpcError {
	return &rpcError{code: codeMissingCapability, message: "Missing required client capability: " + method + " needs the " +
		tasksExtension + ` extension in _meta "` + metaClientCapabilities + `"`,
		data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}}}
}

// hasCoreTasks reports whether m speaks the handshake revision with tasks of its own.
func hasCoreTasks(m rpcMessage) bool { return !m.stateless && m.version == coreTasksVersion }

// isTaskMethod reports whether method is a task method of either era.
func isTaskMethod(method string) bool {
	switch method {
	case "tasks/get", "tasks/update", "tasks/cancel", "tasks/result", "tasks/list":
		return true
	}
	return false
}

// taskMethodError refuses a task method that m may not call, and is nil for one it may:
// tasks/get, tasks/update and tasks/cancel of a stateless request that declares the
// extension, and tasks/get and tasks/result of 2025-11-25.
func taskMethodError(m rpcMessage) *rpcError {
	notFound := func(why string) *rpcError {
		return &rpcError{code: codeMethodNotFound, message: "Method not found: " + m.method + " " + why}
	}
	switch {
	case m.stateless && (m.method == "tasks/result" || m.method == "tasks/list"):
		return notFound("is not part of the Tasks extension (" + tasksExtension + ") of MCP " + statelessVersion)
	case m.stateless && !declaresTasks(m):
		return missingTasks(m.method)
	case m.stateless:
		return nil
	case m.version != coreTasksVersion:
		return notFound("is part of MCP " + coreTasksVersion + " and of the Tasks extension (" + tasksExtension + ") of MCP " + statelessVersion)
	case m.method == "tasks/cancel":
		return notFound("is not served: Agent CLI calls are never cancelled by their caller")
	case m.method == "tasks/list":
		return notFound("is not served: the Agent CLI does not list calls")
	case m.method == "tasks/update":
		return notFound("is not part of MCP " + coreTasksVersion)
	}
	return nil
}

// coreTaskParam reads the "task" param of a tools/call of 2025-11-25: ok reports that one was
// given. Its ttl is not read: a task lives as long as its receipt.
func coreTaskParam(m rpcMessage) (ok bool, rerr *rpcError) {
	v, present := m.params["task"]
	if !present || !hasCoreTasks(m) {
		return false, nil // before 2025-11-25 the param means nothing and is ignored
	}
	if _, isObject := v.(map[string]any); !isObject {
		return false, invalidParams(`"task" must be an object`)
	}
	return true, nil
}

// createTask answers a tools/call of ref with a task: the call is submitted, and its receipt
// becomes the task. What the synchronous answer would be is given instead when no call was
// admitted (a rejection) or its fate is unknown, as no task could then be read.
func (s *mcpServer) createTask(ctx context.Context, ref toolRef, args map[string]any, m rpcMessage) (any, *rpcError) {
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
	task := s.task(callID, status, m.version)
	if hasCoreTasks(m) {
		task["status"] = "working" // a task of 2025-11-25 begins working, whatever comes next
		return map[string]any{"task": task}, nil
	}
	task["resultType"] = "task"
	return task, nil
}

// taskMethod answers a task method that request m may call (taskMethodError is nil).
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
	if m.method == "tasks/result" && !client.IsTerminal(status) {
		if r, rerr = s.settle(ctx, tr, id, r); rerr != nil {
			return nil, rerr
		}
		status, _ = r.Status()
	}
	switch m.method {
	case "tasks/result":
		res := taskResult(r, id, m.version)
		meta, _ := res["_meta"].(map[string]any)
		meta[metaRelatedTask] = map[string]any{"taskId": id}
		return res, nil
	case "tasks/cancel":
		s.log.Info("acknowledged tasks/cancel of a call that goes on: Agent CLI calls are never cancelled by their caller", "call_id", id)
		return map[string]any{}, nil
	case "tasks/update":
		return map[string]any{}, nil // no task of this server ever asks the client for input
	}
	task := s.task(id, status, m.version)
	if client.IsTerminal(status) && m.stateless {
		task["result"] = taskResult(r, id, m.version)
	}
	return task, nil
}

// taskResult is the result of a settled task: what tools/call would have answered.
func taskResult(r *client.Reply, callID, version string) map[string]any {
	if isPermissionReceipt(r) {
		return callRun{callID: callID, receipt: r, version: version}.permissionAnswer()
	}
	return callResult(r, version)
}

// settle waits until the receipt of callID, last read as last, is terminal, however long it
// takes (tasks/result of 2025-11-25 blocks until then), and returns it.
func (s *mcpServer) settle(ctx context.Context, tr *client.Conn, callID string, last *client.Reply) (*client.Reply, *rpcError) {
	for {
		status, err := last.Status()
		if err != nil {
			return nil, &rpcError{code: codeAgentCLI, message: err.Error()}
		}
		if client.IsTerminal(status) {
			return last, nil
		}
		r, err := tr.Wait(ctx, callID, last, time.Now().Add(s.round))
		if err != nil {
			e := asFailure(err)
			if e.status == http.StatusUnauthorized {
				return nil, invalidParams(taskNotFound + " (the response has ended)")
			}
			return nil, &rpcError{code: codeAgentCLI, message: e.msg + "; waiting stopped, and the call may still finish"}
		}
		last = r
	}
}

// isPermissionReceipt reports whether r is a receipt of permission_prompt, whose result is
// always a decision.
func isPermissionReceipt(r *client.Reply) bool {
	return r.Object()["toolkit"] == permissionPrompt.toolkit && r.Object()["function"] == permissionPrompt.function
}

// task is the Task of the receipt of callID, whose status is status, as revision version
// shapes it (see the mapping above).
func (s *mcpServer) task(callID, status, version string) map[string]any {
	return taskOf(callID, status, version, s.statusSince(callID, status))
}

// taskOf is the Task of the receipt of callID, whose status is status and was first seen at
// updated, as revision version shapes it (see the mapping above). Its creation time is the
// call id's.
func taskOf(callID, status, version string, updated time.Time) map[string]any {
	created, _ := client.TimedCallIDTime(callID)
	taskStatus, message := "working", "call "+callID+" is "+status
	switch {
	case client.IsTerminal(status) && version == coreTasksVersion:
		taskStatus = status // completed, failed or cancelled, as the receipt
	case client.IsTerminal(status):
		taskStatus = "completed"
	case status == client.StatusWaiting:
		message += " for a person to decide (an approval or an answer asked of the conversation's people)"
	}
	task := map[string]any{
		"taskId":        callID,
		"status":        taskStatus,
		"statusMessage": message,
		"createdAt":     timestamp(created),
		"lastUpdatedAt": timestamp(updated),
	}
	if version == coreTasksVersion {
		task["ttl"], task["pollInterval"] = taskTTL.Milliseconds(), taskPollInterval.Milliseconds()
	} else {
		task["ttlMs"], task["pollIntervalMs"] = taskTTL.Milliseconds(), taskPollInterval.Milliseconds()
	}
	return task
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
