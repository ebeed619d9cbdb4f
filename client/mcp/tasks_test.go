package mcp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/client"
)

// tasksMeta is the _meta of an MCP 2026-07-28 request whose client declares the Tasks
// extension.
const tasksMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}}`

// taskParams are the params of a task method for id.
func taskParams(id string) string { return `{"taskId":"` + id + `",` + tasksMeta + `}` }

// createTask calls tool name with args as a client of the extension and returns the task.
func createTask(t *testing.T, m *mcpSession, id, name, args string) map[string]any {
	t.Helper()
	res := m.result(id, "tools/call", `{"name":"`+name+`","arguments":`+args+`,`+tasksMeta+`}`)
	if res["resultType"] != "task" {
		t.Fatalf("tools/call of %s answered %v, want a task", name, res)
	}
	return res
}

// taskTimes returns a task's createdAt and lastUpdatedAt, which must be the extension's
// timestamps.
func taskTimes(t *testing.T, task map[string]any) (created, updated time.Time) {
	t.Helper()
	for key, at := range map[string]*time.Time{"createdAt": &created, "lastUpdatedAt": &updated} {
		s, _ := task[key].(string)
		v, err := time.Parse("2006-01-02T15:04:05.000Z", s)
		if err != nil {
			t.Fatalf("%s %q: %v", key, s, err)
		}
		*at = v
	}
	return created, updated
}

// withoutTimes is task as canonical JSON with its timestamps left out, after checking them.
func withoutTimes(t *testing.T, task map[string]any) string {
	t.Helper()
	created, updated := taskTimes(t, task)
	if updated.Before(created) {
		t.Fatalf("lastUpdatedAt %v is before createdAt %v", updated, created)
	}
	rest := map[string]any{}
	for k, v := range task {
		if k != "createdAt" && k != "lastUpdatedAt" {
			rest[k] = v
		}
	}
	return canon(t, rest)
}

// taskFields is the canonical JSON of a task's fixed fields after "statusMessage".
const taskFields = `,"taskId":"%s","ttlMs":86400000}`

func TestMCPTasksExtension(t *testing.T) {
	t.Run("CallIsATaskWhoseIDIsItsCallIDAndWhoseResultIsTheSynchronousOne", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		before := time.Now().Truncate(time.Millisecond)
		task := createTask(t, m, `1`, "test__echo", `{"a":1}`)
		after := time.Now()
		id, _ := task["taskId"].(string)
		var sent string
		f.get(func(f *fakeAgentCLI) { sent, _ = f.calls[0]["call_id"].(string) })
		if id != sent {
			t.Fatalf("taskId %q, call id %q", id, sent)
		}
		created, updated := taskTimes(t, task)
		if created.Before(before) || created.After(after) || !updated.Equal(created) {
			t.Fatalf("createdAt %v lastUpdatedAt %v, want both the creation, between %v and %v", created, updated, before, after)
		}
		want := `{"_meta":{` + serverInfoMeta + `},"pollIntervalMs":1000,"resultType":"task","status":"working","statusMessage":"call ` + id + ` is queued"` +
			strings.Replace(taskFields, "%s", id, 1)
		if got := withoutTimes(t, task); got != want {
			t.Fatalf("task\n got %s\nwant %s", got, want)
		}

		done := m.result(`2`, "tasks/get", taskParams(id))
		want = `{"_meta":{` + serverInfoMeta + `},"pollIntervalMs":1000,"result":{"_meta":{"mindroom-agent/call_id":"` + id + `","mindroom-agent/status":"completed"},` +
			`"content":[{"text":"{\"a\":1}","type":"text"}],"isError":false,"structuredContent":{"a":1}},"resultType":"complete",` +
			`"status":"completed","statusMessage":"call ` + id + ` is completed"` + strings.Replace(taskFields, "%s", id, 1)
		if got := withoutTimes(t, done); got != want {
			t.Fatalf("tasks/get\n got %s\nwant %s", got, want)
		}
		if c, _ := taskTimes(t, done); !c.Equal(created) {
			t.Fatalf("createdAt changed from %v to %v", created, c)
		}
	})
	t.Run("FailedCallIsACompletedTaskWhoseResultIsAnError", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		id := createTask(t, m, `1`, "test__fail", `{"message":"boom"}`)["taskId"].(string)
		done := m.result(`2`, "tasks/get", taskParams(id))
		res, _ := done["result"].(map[string]any)
		if done["status"] != "completed" || res["isError"] != true || textOf(t, res) != "boom" || done["error"] != nil {
			t.Fatalf("tasks/get %v", done)
		}
	})
	t.Run("SlowCallIsWorkingUntilItSettlesAndEachGetWaitsBriefly", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		id := createTask(t, m, `1`, "test__slow", `{}`)["taskId"].(string)
		<-f.submitted
		working := m.result(`2`, "tasks/get", taskParams(id))
		if working["status"] != "working" || working["statusMessage"] != "call "+id+" is running" || working["result"] != nil {
			t.Fatalf("tasks/get %v", working)
		}
		created, updated := taskTimes(t, working)
		if !updated.After(created) && !updated.Equal(created) {
			t.Fatalf("lastUpdatedAt %v before createdAt %v", updated, created)
		}
		var waits []string
		for _, r := range f.srv.requests() {
			if r.method == "GET" {
				waits = append(waits, r.query)
			}
		}
		if strings.Join(waits, " ") != "wait=0.02" {
			t.Fatalf("GETs %q, want one long poll of the task wait", waits)
		}
		again := m.result(`3`, "tasks/get", taskParams(id))
		if _, u := taskTimes(t, again); !u.Equal(updated) {
			t.Fatalf("lastUpdatedAt moved from %v to %v with no change of status", updated, u)
		}
		close(f.release)
		done := m.result(`4`, "tasks/get", taskParams(id))
		res, _ := done["result"].(map[string]any)
		if done["status"] != "completed" || res["isError"] != false || canon(t, res["structuredContent"]) != `{"slow":"done"}` {
			t.Fatalf("tasks/get %v", done)
		}
	})
	t.Run("CallWaitingForAPersonIsWorkingAndSaysSo", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.slowWaitsForAPerson = true })
		m := startMCP(t, f.env(), 0)
		id := createTask(t, m, `1`, "test__slow", `{}`)["taskId"].(string)
		<-f.submitted
		waiting := m.result(`2`, "tasks/get", taskParams(id))
		want := "call " + id + " is waiting for a person to decide (an approval or an answer asked of the conversation's people)"
		if waiting["status"] != "working" || waiting["statusMessage"] != want || waiting["inputRequests"] != nil {
			t.Fatalf("tasks/get %v", waiting)
		}
	})
	t.Run("CancelIsAcknowledgedAndTheCallGoesOnToItsResult", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		id := createTask(t, m, `1`, "test__slow", `{}`)["taskId"].(string)
		<-f.submitted
		if got := canon(t, m.result(`2`, "tasks/cancel", taskParams(id))); got != `{"_meta":{`+serverInfoMeta+`},"resultType":"complete"}` {
			t.Fatalf("tasks/cancel %s", got)
		}
		for _, r := range f.srv.requests() {
			if r.method == "POST" && !strings.Contains(r.body, `"operation":"tools.call"`) {
				t.Fatalf("tasks/cancel sent %s", r.body)
			}
		}
		if !strings.Contains(m.logs.String(), "never cancelled") {
			t.Fatalf("the log does not say the call goes on:\n%s", m.logs.String())
		}
		close(f.release)
		if done := m.result(`3`, "tasks/get", taskParams(id)); done["status"] != "completed" {
			t.Fatalf("tasks/get after tasks/cancel %v", done)
		}
	})
	t.Run("UpdateOfAKnownTaskIsAcknowledged", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		id := createTask(t, m, `1`, "test__echo", `{}`)["taskId"].(string)
		params := `{"taskId":"` + id + `","inputResponses":{"x":{"action":"accept"}},` + tasksMeta + `}`
		if got := canon(t, m.result(`2`, "tasks/update", params)); got != `{"_meta":{`+serverInfoMeta+`},"resultType":"complete"}` {
			t.Fatalf("tasks/update %s", got)
		}
		params = `{"taskId":"` + id + `","inputResponses":[],` + tasksMeta + `}`
		if code, msg, _ := m.rpcError(`3`, "tasks/update", params); code != codeInvalidParams || msg != `"inputResponses" must be an object` {
			t.Fatalf("code %d message %q", code, msg)
		}
	})
	t.Run("UnknownTaskIsInvalidParamsForEveryTaskMethod", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		neverMade, _ := client.NewAgent(client.AgentConfig{}).NewTimedCallID(time.Now())
		for i, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
			code, msg, _ := m.rpcError(`1`+strings.Repeat("0", i), method, taskParams(neverMade))
			if code != codeInvalidParams || msg != taskNotFound+" (no call of this response has that id, or the response has ended)" {
				t.Fatalf("%s of an id the Agent CLI does not know: code %d message %q", method, code, msg)
			}
		}
		asked := len(f.srv.requests())
		for _, id := range []string{"not-a-task", "6f9619ff-8b86-4011-b42d-00c04fc964ff", strings.ToUpper(neverMade)} {
			if code, msg, _ := m.rpcError(`2`, "tasks/get", taskParams(id)); code != codeInvalidParams || msg != taskNotFound {
				t.Fatalf("tasks/get of %q: code %d message %q", id, code, msg)
			}
		}
		if len(f.srv.requests()) != asked {
			t.Fatalf("an id that no task of this server has was sent to the Agent CLI")
		}
		if code, msg, _ := m.rpcError(`3`, "tasks/get", `{`+tasksMeta+`}`); code != codeInvalidParams || msg != `tasks/get needs "taskId", a string` {
			t.Fatalf("tasks/get without taskId: code %d message %q", code, msg)
		}
	})
	t.Run("TaskMethodsNeedTheExtensionDeclaredInTheRequest", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		m.initialize("2025-06-18")
		for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			code, msg, data := m.rpcError(`1`, method, `{"taskId":"x",`+statelessMeta("")+`}`)
			if code != codeMissingCapability || msg != "Missing required client capability: "+method+
				` needs the io.modelcontextprotocol/tasks extension in _meta "io.modelcontextprotocol/clientCapabilities"` ||
				canon(t, data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
				t.Fatalf("%s without the extension: code %d message %q data %v", method, code, msg, data)
			}
			code, msg, _ = m.rpcError(`2`, method, `{"taskId":"x"}`)
			if code != codeMethodNotFound || msg != "Method not found: "+method+" is part of MCP 2025-11-25 and of the Tasks extension (io.modelcontextprotocol/tasks) of MCP 2026-07-28" {
				t.Fatalf("%s in 2025-06-18: code %d message %q", method, code, msg)
			}
		}
		for _, method := range []string{"tasks/result", "tasks/list"} {
			code, msg, _ := m.rpcError(`3`, method, taskParams("x"))
			if code != codeMethodNotFound || msg != "Method not found: "+method+" is not part of the Tasks extension (io.modelcontextprotocol/tasks) of MCP 2026-07-28" {
				t.Fatalf("%s in 2026-07-28: code %d message %q", method, code, msg)
			}
		}
	})
	t.Run("ServerWithoutLongPollsIsReadAgainAtOnce", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.rejectsWait = true })
		m := startMCP(t, f.env(), 0)
		id := createTask(t, m, `1`, "test__echo", `{}`)["taskId"].(string)
		if done := m.result(`2`, "tasks/get", taskParams(id)); done["status"] != "completed" {
			t.Fatalf("tasks/get %v", done)
		}
		var queries []string
		for _, r := range f.srv.requests() {
			if r.method == "GET" {
				queries = append(queries, r.query)
			}
		}
		if strings.Join(queries, "|") != "wait=0.02|" {
			t.Fatalf("GETs %q, want a long poll refused, then a plain read", queries)
		}
	})
	t.Run("AgentCLIFailureIsMinus32002WithItsStatus", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		id := createTask(t, m, `1`, "test__echo", `{}`)["taskId"].(string)
		f.set(func(f *fakeAgentCLI) { f.failGets = true })
		code, msg, data := m.rpcError(`2`, "tasks/get", taskParams(id))
		if code != codeAgentCLI || !strings.Contains(msg, "internal error") || canon(t, data) != `{"status":500}` {
			t.Fatalf("code %d message %q data %v", code, msg, data)
		}
	})
	t.Run("TaskMethodWithoutTheEnvironmentIsAuthorityUnavailable", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		neverMade, _ := client.NewAgent(client.AgentConfig{}).NewTimedCallID(time.Now())
		if code, _, _ := m.rpcError(`1`, "tasks/get", taskParams(neverMade)); code != codeAuthority {
			t.Fatalf("code %d", code)
		}
	})
	t.Run("ClientWithoutTheExtensionGetsTheSynchronousResult", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		other := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.example/other":{}}}}`
		res := m.result(`1`, "tools/call", `{"name":"test__echo","arguments":{"a":1},`+other+`}`)
		if res["resultType"] != "complete" || res["taskId"] != nil || canon(t, res["structuredContent"]) != `{"a":1}` {
			t.Fatalf("tools/call %v", res)
		}
	})
	t.Run("PermissionPromptIsAnsweredWithItsDecisionNeverATask", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		res := m.result(`1`, "tools/call", `{"name":"permission_prompt","arguments":{"tool_name":"Bash","input":{"x":1}},`+tasksMeta+`}`)
		if res["resultType"] != "complete" || textOf(t, res) != `{"behavior":"allow","updatedInput":{"x":1}}` {
			t.Fatalf("tools/call %v", res)
		}
	})
	t.Run("RejectedCallIsNoTaskButTheRejection", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		f.set(func(f *fakeAgentCLI) { f.rejectCalls = &fakeRejection{409, "Bash call has ended"} })
		m := startMCP(t, f.env(), 0)
		res := m.result(`1`, "tools/call", `{"name":"test__echo","arguments":{},`+tasksMeta+`}`)
		if res["resultType"] != "complete" || res["isError"] != true || !strings.Contains(textOf(t, res), "Bash call has ended") {
			t.Fatalf("tools/call %v", res)
		}
	})
}

func TestMCPTasksHelp(t *testing.T) {
	t.Run("HelpStatesTheWaitTheTimeToLiveAndThePollIntervalServed", func(t *testing.T) {
		o := runCLI(t, nil, "", "mcp", "--help")
		help := strings.Join(strings.Fields(o.stdout), " ")
		for _, want := range []string{
			fmt.Sprintf("waiting up to %d seconds for the call to settle", int(taskWait.Seconds())),
			fmt.Sprintf("(ttlMs %d, the longest a response lasts)", taskTTL.Milliseconds()),
			fmt.Sprintf("(pollIntervalMs %d suggests", taskPollInterval.Milliseconds()),
		} {
			if !strings.Contains(help, want) {
				t.Errorf("help lacks %q", want)
			}
		}
	})
}

func TestMCPCoreTasks(t *testing.T) {
	// coreTask starts a server of 2025-11-25 and calls tool name with args as a task.
	coreTask := func(t *testing.T, f *fakeAgentCLI, name, args string) (*mcpSession, map[string]any) {
		t.Helper()
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-11-25")
		res := m.result(`1`, "tools/call", `{"name":"`+name+`","arguments":`+args+`,"task":{"ttl":60000}}`)
		task, _ := res["task"].(map[string]any)
		if task == nil || len(res) != 1 {
			t.Fatalf("tools/call of %s answered %v, want a task", name, res)
		}
		return m, task
	}
	t.Run("ToolsButPermissionPromptMayBeTasksIn20251125Only", func(t *testing.T) {
		for _, version := range []string{"2025-11-25", "2025-06-18", statelessVersion} {
			f := newFakeAgentCLI(t)
			m := startMCP(t, f.env(), 0)
			params := ""
			if version == statelessVersion {
				params = `{` + statelessMeta("") + `}`
			} else {
				m.initialize(version)
			}
			res := m.result(`1`, "tools/list", params)
			want := ""
			if version == "2025-11-25" {
				want = `{"taskSupport":"optional"}`
			}
			if got := canon(t, toolByName(t, res, "test__echo")["execution"]); version == "2025-11-25" && got != want || version != "2025-11-25" && got != "null" {
				t.Fatalf("%s: test__echo execution %s", version, got)
			}
			if got := toolByName(t, res, "permission_prompt")["execution"]; got != nil {
				t.Fatalf("%s: permission_prompt execution %v", version, got)
			}
		}
	})
	t.Run("CallWithATaskIsAWorkingTaskWhoseResultTasksResultWaitsFor", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m, task := coreTask(t, f, "test__slow", `{}`)
		id, _ := task["taskId"].(string)
		<-f.submitted
		want := `{"pollInterval":1000,"status":"working","statusMessage":"call ` + id + ` is queued","taskId":"` + id + `","ttl":86400000}`
		if got := withoutTimes(t, task); got != want {
			t.Fatalf("task\n got %s\nwant %s", got, want)
		}
		working := m.result(`2`, "tasks/get", `{"taskId":"`+id+`"}`)
		if working["status"] != "working" || working["statusMessage"] != "call "+id+" is running" || working["resultType"] != nil {
			t.Fatalf("tasks/get %v", working)
		}
		m.send(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"` + id + `"}}`)
		close(f.release)
		res, _ := m.answer(`3`)["result"].(map[string]any)
		want = `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + id + `"},"mindroom-agent/call_id":"` + id + `","mindroom-agent/status":"completed"},` +
			`"content":[{"text":"{\"slow\":\"done\"}","type":"text"}],"isError":false,"structuredContent":{"slow":"done"}}`
		if got := canon(t, res); got != want {
			t.Fatalf("tasks/result\n got %s\nwant %s", got, want)
		}
		if done := m.result(`4`, "tasks/get", `{"taskId":"`+id+`"}`); done["status"] != "completed" || done["result"] != nil {
			t.Fatalf("tasks/get %v", done)
		}
	})
	t.Run("FailedCallIsAFailedTaskWhoseResultIsTheToolError", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m, task := coreTask(t, f, "test__fail", `{"message":"boom"}`)
		id, _ := task["taskId"].(string)
		if got := m.result(`2`, "tasks/get", `{"taskId":"`+id+`"}`); got["status"] != "failed" {
			t.Fatalf("tasks/get %v", got)
		}
		res := m.result(`3`, "tasks/result", `{"taskId":"`+id+`"}`)
		if res["isError"] != true || textOf(t, res) != "boom" {
			t.Fatalf("tasks/result %v", res)
		}
	})
	t.Run("CancelListAndUpdateAreNotServed", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		m.initialize("2025-11-25")
		for method, why := range map[string]string{
			"tasks/cancel": "is not served: Agent CLI calls are never cancelled by their caller",
			"tasks/list":   "is not served: the Agent CLI does not list calls",
			"tasks/update": "is not part of MCP 2025-11-25",
		} {
			if code, msg, _ := m.rpcError(`1`, method, `{"taskId":"x"}`); code != codeMethodNotFound || msg != "Method not found: "+method+" "+why {
				t.Fatalf("%s: code %d message %q", method, code, msg)
			}
		}
	})
	t.Run("PermissionPromptIsNeverATask", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-11-25")
		code, msg, _ := m.rpcError(`1`, "tools/call", `{"name":"permission_prompt","arguments":{},"task":{}}`)
		if code != codeMethodNotFound || !strings.Contains(msg, `"taskSupport" is "forbidden"`) {
			t.Fatalf("code %d message %q", code, msg)
		}
		if f.srv.requests() != nil {
			t.Fatalf("a call was submitted")
		}
	})
	t.Run("TaskMustBeAnObject", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-11-25")
		if code, msg, _ := m.rpcError(`1`, "tools/call", `{"name":"test__echo","arguments":{},"task":60000}`); code != codeInvalidParams || msg != `"task" must be an object` {
			t.Fatalf("code %d message %q", code, msg)
		}
	})
	t.Run("TaskMeansNothingBefore20251125", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-06-18")
		res := m.result(`1`, "tools/call", `{"name":"test__echo","arguments":{"a":1},"task":{}}`)
		if res["task"] != nil || textOf(t, res) != `{"a":1}` {
			t.Fatalf("tools/call %v", res)
		}
	})
	t.Run("UnknownTaskIsInvalidParams", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2025-11-25")
		neverMade, _ := client.NewAgent(client.AgentConfig{}).NewTimedCallID(time.Now())
		for _, method := range []string{"tasks/get", "tasks/result"} {
			if code, msg, _ := m.rpcError(`1`, method, `{"taskId":"`+neverMade+`"}`); code != codeInvalidParams || !strings.HasPrefix(msg, taskNotFound) {
				t.Fatalf("%s: code %d message %q", method, code, msg)
			}
		}
	})
}
