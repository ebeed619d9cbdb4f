package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// tasksExtension names the MCP Tasks extension in capabilities.
const tasksExtension = "io.modelcontextprotocol/tasks"

// TestMindroomAgentMCPTasks holds the real `mindroom-agent mcp` binary, serving a real primary,
// to the Tasks extension of MCP 2026-07-28, and to the tasks of 2025-11-25. The official Go SDK's client reads the extension
// in server/discover and, not declaring it, gets synchronous results; the SDK has no Tasks
// client, so the task methods are sent as raw JSON-RPC messages over the same kind of pipe.
func TestMindroomAgentMCPTasks(t *testing.T) {
	env := testenv.Start(t)
	id := env.Open(t) // minimal shell mode: test.confirm_echo waits for an admin's approval
	vars := holdWindowOpen(t, env, id, "bash-mcp-tasks", "mcp-tasks")
	ctx := context.Background()

	t.Run("DiscoverDeclaresTheExtensionAndAClientWithoutItGetsTheResultAtOnce", func(t *testing.T) {
		session, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: mcpCommand(t, env, vars)}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer session.Close()
		init := session.InitializeResult()
		if init.ProtocolVersion != "2026-07-28" || init.Capabilities == nil || init.Capabilities.Extensions[tasksExtension] == nil {
			t.Fatalf("session %s", mcpJSON(t, init))
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"sync": true}})
		if err != nil || res.IsError || mcpText(res) != `{"sync":true}` {
			t.Fatalf("call: %s, %v", mcpJSON(t, res), err)
		}
	})

	rpc := startRawMCP(t, mcpCommand(t, env, vars))
	meta := `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"2026-07-28","` + mcp.MetaKeyClientCapabilities + `":{"extensions":{"` + tasksExtension + `":{}}}}`
	taskParams := func(taskID string) string { return `{"taskId":"` + taskID + `",` + meta + `}` }
	createTask := func(t *testing.T, name, args string) taskView {
		t.Helper()
		var task taskView
		rpc.result(t, "tools/call", `{"name":"`+name+`","arguments":`+args+`,`+meta+`}`, &task)
		if task.ResultType != "task" || task.TTLMs != 86400000 || task.PollIntervalMs != 1000 || task.CreatedAt == "" {
			t.Fatalf("tools/call of %s answered %+v, want a task", name, task)
		}
		return task
	}

	t.Run("TaskOfACallIsItsReceiptAndHoldsItsResult", func(t *testing.T) {
		task := createTask(t, "test__echo", `{"era":"tasks"}`)
		if _, err := uuid.Parse(task.TaskID); err != nil {
			t.Fatalf("taskId %q is not a call id: %v", task.TaskID, err)
		}
		var done taskView
		rpc.result(t, "tasks/get", taskParams(task.TaskID), &done)
		if done.ResultType != "complete" || done.Status != "completed" || done.CreatedAt != task.CreatedAt || done.Result == nil ||
			done.Result.IsError || mcpText(done.Result) != `{"era":"tasks"}` || done.Result.Meta["mindroom-agent/call_id"] != task.TaskID {
			t.Fatalf("tasks/get %+v, result %s", done, mcpJSON(t, done.Result))
		}
		var ack map[string]any
		rpc.result(t, "tasks/cancel", taskParams(task.TaskID), &ack)
		if ack["resultType"] != "complete" {
			t.Fatalf("tasks/cancel %v", ack)
		}
	})

	t.Run("CallWaitingForAnApprovalIsWorkingUntilAnAdminApproves", func(t *testing.T) {
		task := createTask(t, "test__confirm_echo", `{"x":1}`)
		waitingMsg := "call " + task.TaskID + " is waiting for a person to decide"
		// The first tasks/get may still see the call queued; each waits at most its few seconds.
		var seen taskView
		for range 5 {
			rpc.result(t, "tasks/get", taskParams(task.TaskID), &seen)
			if seen.Status != "working" || strings.HasPrefix(seen.StatusMessage, waitingMsg) {
				break
			}
		}
		if seen.Status != "working" || !strings.HasPrefix(seen.StatusMessage, waitingMsg) || seen.Result != nil {
			t.Fatalf("tasks/get while the approval is pending %+v", seen)
		}
		approvals, err := env.Primary.Internals().Responses.CallApprovals().ListCallApprovals(ctx,
			store.CallApprovalFilter{Status: store.CallApprovalWaiting, ResponseID: id})
		if err != nil || len(approvals) != 1 || approvals[0].CallID != task.TaskID {
			t.Fatalf("waiting call approvals %+v, %v", approvals, err)
		}
		if _, err := env.Primary.Internals().Responses.CallApprovals().Approve(ctx, approvals[0].ID,
			store.Operator{Name: "ada", Role: store.RoleAdmin}); err != nil {
			t.Fatal(err)
		}
		var done taskView
		for range 5 {
			rpc.result(t, "tasks/get", taskParams(task.TaskID), &done)
			if done.Status == "completed" {
				break
			}
		}
		if done.Status != "completed" || done.Result == nil || done.Result.IsError || mcpText(done.Result) != `{"x":1}` {
			t.Fatalf("tasks/get after the approval %+v, result %s", done, mcpJSON(t, done.Result))
		}
	})

	t.Run("ClientOf20251125CallsAsATaskAndWaitsForTheResult", func(t *testing.T) {
		legacy := startRawMCP(t, mcpCommand(t, env, vars))
		var init struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Capabilities    map[string]any `json:"capabilities"`
		}
		legacy.result(t, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}`, &init)
		if init.ProtocolVersion != "2025-11-25" || init.Capabilities["tasks"] == nil {
			t.Fatalf("initialize %+v", init)
		}
		if err := legacy.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
			t.Fatal(err)
		}
		var created struct{ Task taskView }
		legacy.result(t, "tools/call", `{"name":"test__echo","arguments":{"era":"2025-11-25"},"task":{"ttl":60000}}`, &created)
		if created.Task.Status != "working" || created.Task.TaskID == "" {
			t.Fatalf("tools/call %+v", created)
		}
		var res mcp.CallToolResult
		legacy.result(t, "tasks/result", `{"taskId":"`+created.Task.TaskID+`"}`, &res)
		related, _ := res.Meta["io.modelcontextprotocol/related-task"].(map[string]any)
		if res.IsError || mcpText(&res) != `{"era":"2025-11-25"}` || related["taskId"] != created.Task.TaskID {
			t.Fatalf("tasks/result %s", mcpJSON(t, &res))
		}
	})

	t.Run("TaskOfNoCallOfThisResponseIsNotFound", func(t *testing.T) {
		other, err := uuid.NewV7()
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{"tasks/get", "tasks/cancel"} {
			wireErr := rpc.failure(t, method, taskParams(other.String()))
			if wireErr.Code != jsonrpc.CodeInvalidParams || !strings.HasPrefix(wireErr.Message, "Failed to retrieve task: Task not found") {
				t.Fatalf("%s: error %d %q", method, wireErr.Code, wireErr.Message)
			}
		}
	})
}

// taskView is a task as tools/call and tasks/get answer it.
type taskView struct {
	ResultType     string              `json:"resultType"`
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	StatusMessage  string              `json:"statusMessage"`
	CreatedAt      string              `json:"createdAt"`
	LastUpdatedAt  string              `json:"lastUpdatedAt"`
	TTLMs          int64               `json:"ttlMs"`
	PollIntervalMs int64               `json:"pollIntervalMs"`
	Result         *mcp.CallToolResult `json:"result"`
}

// rawMCP sends JSON-RPC requests one at a time to an MCP server process over stdio.
type rawMCP struct {
	conn mcp.Connection
	next float64
}

// startRawMCP starts the MCP server cmd; cleanup closes it.
func startRawMCP(t *testing.T, cmd *exec.Cmd) *rawMCP {
	t.Helper()
	conn, err := (&mcp.CommandTransport{Command: cmd}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawMCP{conn: conn}
}

// call sends one request and returns its answer.
func (r *rawMCP) call(t *testing.T, method, params string) *jsonrpc.Response {
	t.Helper()
	ctx := context.Background()
	r.next++
	reqID, _ := jsonrpc.MakeID(r.next)
	if err := r.conn.Write(ctx, &jsonrpc.Request{ID: reqID, Method: method, Params: json.RawMessage(params)}); err != nil {
		t.Fatal(err)
	}
	msg, err := r.conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.ID != reqID {
		t.Fatalf("%s: answer %#v", method, msg)
	}
	return resp
}

// result sends one request and decodes its result into out.
func (r *rawMCP) result(t *testing.T, method, params string, out any) {
	t.Helper()
	resp := r.call(t, method, params)
	if resp.Error != nil || json.Unmarshal(resp.Result, out) != nil {
		t.Fatalf("%s: result %s error %v", method, resp.Result, resp.Error)
	}
}

// failure sends one request and returns its JSON-RPC error.
func (r *rawMCP) failure(t *testing.T, method, params string) *jsonrpc.Error {
	t.Helper()
	resp := r.call(t, method, params)
	var wireErr *jsonrpc.Error
	if !errors.As(resp.Error, &wireErr) {
		t.Fatalf("%s: answered %s, want an error", method, resp.Result)
	}
	return wireErr
}
