package mcpgateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// tasksExtension names the MCP Tasks extension in capabilities.
const tasksExtension = "io.modelcontextprotocol/tasks"

// task is a Task of the extension, with the result of a completed one.
type task struct {
	ResultType     string              `json:"resultType"`
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	StatusMessage  string              `json:"statusMessage"`
	CreatedAt      string              `json:"createdAt"`
	LastUpdatedAt  string              `json:"lastUpdatedAt"`
	TTLMs          int64               `json:"ttlMs"`
	PollIntervalMs int64               `json:"pollIntervalMs"`
	Result         *sdk.CallToolResult `json:"result"`
}

// wireError is a JSON-RPC error.
type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// rpc posts one 2026-07-28 request of method to o's endpoint with params (a JSON object's
// members, without braces) and _meta declaring the client's capabilities caps, and decodes
// its result into out, or returns its error. A tools/call names its tool in Mcp-Name, as
// the revision asks.
func rpc(t *testing.T, o opened, method, params, caps string, out any) *wireError {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps +
		`,"io.modelcontextprotocol/clientInfo":{"name":"curl","version":"1"}}`
	if params != "" {
		meta = params + "," + meta
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + meta + `}}`
	header := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if method == "tools/call" {
		var call struct{ Params struct{ Name string } }
		if err := json.Unmarshal([]byte(body), &call); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		header["Mcp-Name"] = call.Params.Name
	}
	status, got := post(t, o.url, "Bearer "+o.token, body, header)
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *wireError      `json:"error"`
	}
	if err := json.Unmarshal([]byte(got), &answer); err != nil {
		t.Fatalf("%s answered %d %s: %v", method, status, got, err)
	}
	if answer.Error != nil {
		return answer.Error
	}
	if err := json.Unmarshal(answer.Result, out); err != nil {
		t.Fatalf("%s answered %s: %v", method, answer.Result, err)
	}
	return nil
}

// withTasks declares the extension; withoutTasks declares nothing.
const (
	withTasks    = `{"extensions":{"` + tasksExtension + `":{}}}`
	withoutTasks = `{}`
)

// TestTheTasksExtension: a 2026-07-28 tools/call declaring the Tasks extension is answered at
// once with a task whose id is the native call's, and tasks/get reads it until it holds the
// result tools/call would have given; a call waiting on a person stays working until approved.
func TestTheTasksExtension(t *testing.T) {
	env := testenv.Start(t)
	// A minimal shell mode: test.confirm_echo waits for an admin's approval.
	o := open(t, env, func(r *responsev1.OpenResponseRequest) { r.ShellMode = responsev1.ShellMode_SHELL_MODE_MINIMAL })
	ctx := context.Background()
	createTask := func(t *testing.T, name, args string) task {
		t.Helper()
		var created task
		if e := rpc(t, o, "tools/call", `"name":"`+name+`","arguments":`+args, withTasks, &created); e != nil {
			t.Fatalf("tools/call of %s: error %+v", name, e)
		}
		if created.ResultType != "task" || created.Status != "working" || created.TTLMs != 86400000 ||
			created.PollIntervalMs != 1000 || created.CreatedAt == "" || created.Result != nil {
			t.Fatalf("tools/call of %s answered %+v, want a working task", name, created)
		}
		return created
	}
	get := func(t *testing.T, id string) task {
		t.Helper()
		var got task
		if e := rpc(t, o, "tasks/get", `"taskId":"`+id+`"`, withTasks, &got); e != nil {
			t.Fatalf("tasks/get: error %+v", e)
		}
		if got.ResultType != "complete" || got.TaskID != id {
			t.Fatalf("tasks/get of %s answered %+v", id, got)
		}
		return got
	}

	t.Run("DiscoverDeclaresTheExtension", func(t *testing.T) {
		cs := connect(t, o, "2026-07-28")
		if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Extensions[tasksExtension] == nil {
			t.Fatalf("server/discover's capabilities are %+v", caps)
		}
	})
	t.Run("InitializeDoesNotDeclareIt", func(t *testing.T) {
		cs := connect(t, o, "2025-11-25")
		if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Tools == nil || caps.Extensions[tasksExtension] != nil {
			t.Fatalf("initialize's capabilities are %+v", caps)
		}
	})
	t.Run("ATaskIsTheCallsReceiptAndHoldsItsResult", func(t *testing.T) {
		created := createTask(t, "test__echo", `{"era":"tasks"}`)
		if v, err := uuid.Parse(created.TaskID); err != nil || v.Version() != 7 {
			t.Fatalf("taskId %q is not a call id: %v", created.TaskID, err)
		}
		var done task
		for range 5 { // each tasks/get waits a few seconds for the call to settle
			if done = get(t, created.TaskID); done.Status == "completed" {
				break
			}
		}
		if done.Status != "completed" || done.CreatedAt != created.CreatedAt || done.Result == nil || done.Result.IsError ||
			len(done.Result.Content) != 1 || text(done.Result.Content[0]) != `{"era":"tasks"}` ||
			done.Result.Meta["mindroom-agent/call_id"] != created.TaskID {
			t.Fatalf("tasks/get %+v, result %+v", done, done.Result)
		}
		var ack map[string]any
		if e := rpc(t, o, "tasks/cancel", `"taskId":"`+created.TaskID+`"`, withTasks, &ack); e != nil || ack["resultType"] != "complete" {
			t.Fatalf("tasks/cancel: %v, error %+v", ack, e)
		}
	})
	t.Run("ACallWaitingOnAPersonIsWorkingUntilApproved", func(t *testing.T) {
		created := createTask(t, "test__confirm_echo", `{"x":1}`)
		waiting := "call " + created.TaskID + " is waiting for a person to decide"
		var seen task
		for range 5 { // the first tasks/get may still see the call queued
			if seen = get(t, created.TaskID); seen.Status != "working" || strings.HasPrefix(seen.StatusMessage, waiting) {
				break
			}
		}
		if seen.Status != "working" || !strings.HasPrefix(seen.StatusMessage, waiting) || seen.Result != nil {
			t.Fatalf("tasks/get while the approval is pending %+v", seen)
		}
		approvals, err := env.Primary.Internals().Responses.CallApprovals().ListCallApprovals(ctx,
			store.CallApprovalFilter{Status: store.CallApprovalWaiting, ResponseID: o.id})
		if err != nil || len(approvals) != 1 || approvals[0].CallID != created.TaskID {
			t.Fatalf("waiting call approvals %+v, %v", approvals, err)
		}
		if _, err := env.Primary.Internals().Responses.CallApprovals().Approve(ctx, approvals[0].ID,
			store.Operator{Name: "ada", Role: store.RoleAdmin}); err != nil {
			t.Fatal(err)
		}
		var done task
		for range 5 {
			if done = get(t, created.TaskID); done.Status == "completed" {
				break
			}
		}
		if done.Status != "completed" || done.Result == nil || done.Result.IsError || text(done.Result.Content[0]) != `{"x":1}` {
			t.Fatalf("tasks/get after the approval %+v, result %+v", done, done.Result)
		}
	})
	t.Run("AnotherResponsesTaskIsNotFound", func(t *testing.T) {
		other := open(t, env)
		var created task
		if e := rpc(t, other, "tools/call", `"name":"test__echo","arguments":{}`, withTasks, &created); e != nil || created.TaskID == "" {
			t.Fatalf("the other response's tools/call: %+v, error %+v", created, e)
		}
		unknown, err := uuid.NewV7()
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{created.TaskID, unknown.String(), "not-a-call-id"} {
			for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
				var out map[string]any
				e := rpc(t, o, method, `"taskId":"`+id+`"`, withTasks, &out)
				if e == nil || e.Code != -32602 || !strings.HasPrefix(e.Message, "Failed to retrieve task: Task not found") {
					t.Fatalf("%s of %s through another response's credential: %v, error %+v", method, id, out, e)
				}
			}
		}
	})
	t.Run("ATaskMethodWithoutTheExtensionIsMissingACapability", func(t *testing.T) {
		created := createTask(t, "test__echo", `{}`)
		for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
			var out map[string]any
			e := rpc(t, o, method, `"taskId":"`+created.TaskID+`"`, withoutTasks, &out)
			if e == nil || e.Code != -32021 || !strings.Contains(string(e.Data), tasksExtension) {
				t.Fatalf("%s without the extension: %v, error %+v", method, out, e)
			}
		}
	})
	t.Run("ACallWithoutTheExtensionIsAnsweredWithItsResult", func(t *testing.T) {
		var res sdk.CallToolResult
		if e := rpc(t, o, "tools/call", `"name":"test__echo","arguments":{"sync":true}`, withoutTasks, &res); e != nil {
			t.Fatalf("tools/call: error %+v", e)
		}
		if res.IsError || len(res.Content) != 1 || text(res.Content[0]) != `{"sync":true}` {
			t.Fatalf("tools/call answered %s", contents(&res))
		}
	})
}
