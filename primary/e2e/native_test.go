package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/response"
)

// runtimeREST calls the runtime's REST API with the runtime credential and decodes the JSON.
func runtimeREST(t *testing.T, env *testenv.Env, method, path, body string) (int, map[string]any) {
	t.Helper()
	code, raw := runtimeRESTRaw(t, env, method, path, body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %d %q is not JSON", method, path, code, raw)
	}
	return code, out
}

// runtimeRESTRaw is runtimeREST for answers that are not one JSON object (a streamed RunBash).
func runtimeRESTRaw(t *testing.T, env *testenv.Env, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, env.HTTPURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// nativeNames lists every "toolkit.function" of a response's native catalog, page by page.
func nativeNames(t *testing.T, env *testenv.Env, id string) []string {
	t.Helper()
	var names []string
	cursor := ""
	for range 100 {
		page, err := env.Runtime.ListTools(context.Background(), &responsev1.ListToolsRequest{ResponseId: id, Cursor: cursor, Limit: 7})
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		for _, it := range page.GetItems() {
			names = append(names, it.GetToolkit()+"."+it.GetFunction())
		}
		if cursor = page.GetNextCursor(); cursor == "" {
			return names
		}
	}
	t.Fatal("the listing never ended")
	return nil
}

var interactionControls = []string{
	"interaction.run_in_background", "interaction.run_agent_in_background", "interaction.request_approval",
	"interaction.report_progress", "interaction.permission_prompt", "interaction.ask_questions",
}

// openStandard opens a standard-mode foreground response offered every control: a trusted
// requester in a thread, with progress reporting.
func openStandard(t *testing.T, env *testenv.Env, flags ...string) string {
	return env.Open(t, func(r *responsev1.OpenResponseRequest) {
		r.ShellMode = responsev1.ShellMode_SHELL_MODE_STANDARD
		r.Flags = append([]string{"requester_trusted", "progress_report"}, flags...)
	})
}

func TestNativeCatalogKeepsTheControlsTheShellModeHides(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()

	t.Run("StandardResponseOffersAllSixNatively", func(t *testing.T) {
		id := openStandard(t, env)
		names := nativeNames(t, env, id)
		for _, c := range append(slices.Clone(interactionControls), "test.confirm_echo", "test.echo") {
			if !slices.Contains(names, c) {
				t.Errorf("native catalog lacks %s: %v", c, names)
			}
		}
		run := env.RunBash(t, id, "list", `mindroom-agent tools list --limit 1000; mindroom-agent tools describe interaction request_approval; echo "describe=$?"`)
		if strings.Contains(run.Stdout, `"request_approval"`) || !strings.Contains(run.Stdout, "describe=2") {
			t.Errorf("the standard shell sees request_approval: %q", run.Stdout)
		}
		found, err := env.Runtime.SearchTools(ctx, &responsev1.SearchToolsRequest{ResponseId: id, Query: "approval", Toolkit: "interaction"})
		if err != nil || len(found.GetItems()) == 0 || found.GetItems()[0].GetFunction() != "request_approval" {
			t.Errorf("SearchTools = %v, %v", found, err)
		}
	})

	t.Run("CleanResponseHasNoInteractionToolkitNatively", func(t *testing.T) {
		id := openStandard(t, env, "clean")
		for _, n := range nativeNames(t, env, id) {
			if strings.HasPrefix(n, "interaction.") {
				t.Errorf("clean response offers %s", n)
			}
		}
		// The call is admitted (a receipt) and fails naming what exists, as from Bash.
		res, err := env.Runtime.CallTool(ctx, &responsev1.CallToolRequest{ResponseId: id, CallId: uuid.NewString(),
			Toolkit: "interaction", Function: "request_approval", ArgumentsJson: `{"details":"x"}`, Wait: durationpb.New(5 * time.Second)})
		if err != nil || res.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_FAILED ||
			!strings.Contains(res.GetReceipt().GetOutcomeJson(), "Unknown toolkit") {
			t.Errorf("CallTool = %v, %v; want a failed receipt naming the unknown toolkit", res, err)
		}
	})

	t.Run("DescribeCarriesTraits", func(t *testing.T) {
		id := openStandard(t, env)
		for _, tc := range []struct {
			function string
			want     *responsev1.FunctionTraits
		}{
			{"request_approval", &responsev1.FunctionTraits{UserInput: true}},
			{"run_in_background", &responsev1.FunctionTraits{ExternalExecution: true, EndsTurn: true}},
			{"report_progress", &responsev1.FunctionTraits{}},
		} {
			d, err := env.Runtime.DescribeTool(ctx, &responsev1.DescribeToolRequest{ResponseId: id, Toolkit: "interaction", Function: tc.function})
			if err != nil {
				t.Fatalf("DescribeTool %s: %v", tc.function, err)
			}
			got := d.GetTraits()
			if got.GetUserInput() != tc.want.GetUserInput() || got.GetEndsTurn() != tc.want.GetEndsTurn() ||
				got.GetExternalExecution() != tc.want.GetExternalExecution() || got.GetNeedsConfirmation() != tc.want.GetNeedsConfirmation() {
				t.Errorf("%s traits %v, want %v", tc.function, got, tc.want)
			}
			if !json.Valid([]byte(d.GetInputSchemaJson())) || !strings.Contains(d.GetInputSchemaJson(), `"type":"object"`) || d.GetDescription() == "" {
				t.Errorf("%s descriptor %v", tc.function, d)
			}
		}
		_, err := env.Runtime.DescribeTool(ctx, &responsev1.DescribeToolRequest{ResponseId: id, Toolkit: "interaction", Function: "nope"})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "request_approval") {
			t.Errorf("describe of an unknown function: %v, want InvalidArgument naming what exists", err)
		}
	})
}

func TestNativeCallsFollowTheCLIRules(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	id := openStandard(t, env)
	call := func(callID, function, args string, wait time.Duration) (*responsev1.Receipt, error) {
		req := &responsev1.CallToolRequest{ResponseId: id, CallId: callID, Toolkit: "test", Function: function, ArgumentsJson: args}
		if wait != 0 {
			req.Wait = durationpb.New(wait)
		}
		res, err := env.Runtime.CallTool(ctx, req)
		return res.GetReceipt(), err
	}

	t.Run("CallWaitsAndCarriesNoParent", func(t *testing.T) {
		callID := uuid.NewString()
		rc, err := call(strings.ToUpper(callID), "echo", `{"b":2,"a":1.0}`, 10*time.Second)
		if err != nil || rc.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED || rc.GetOutcomeJson() != `{"a":1.0,"b":2}` ||
			rc.GetParentBashCallId() != "" || rc.GetCallId() != callID {
			t.Fatalf("CallTool = %v, %v", rc, err)
		}
		t.Run("SameOperationReplays", func(t *testing.T) {
			again, err := call(callID, "echo", `{"a":1.0, "b":2}`, 0)
			if err != nil || again.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED || again.GetOutcomeJson() != rc.GetOutcomeJson() {
				t.Errorf("replay = %v, %v", again, err)
			}
		})
		t.Run("DifferentOperationIsAConflict", func(t *testing.T) {
			for _, args := range []string{`{"a":1,"b":2}`, `{}`} {
				_, err := call(callID, "echo", args, 0)
				if status.Code(err) != codes.Aborted || !strings.Contains(err.Error(), clierr.CallIDConflict) {
					t.Errorf("args %s: %v, want Aborted %q", args, err, clierr.CallIDConflict)
				}
			}
		})
		t.Run("BashShellCanReadTheNativeReceipt", func(t *testing.T) {
			run := env.RunBash(t, id, "read-native", "mindroom-agent calls get "+callID)
			if run.Result.GetExitCode() != 0 || !strings.Contains(run.Stdout, `"parent_bash_call_id":""`) {
				t.Errorf("calls get: %d %q %q", run.Result.GetExitCode(), run.Stdout, run.Stderr)
			}
		})
	})

	t.Run("WithoutWaitTheReceiptIsQueued", func(t *testing.T) {
		callID := uuid.NewString()
		rc, err := call(callID, "gate", `{"name":"no-wait"}`, 0)
		if err != nil || rc.GetStatus() != responsev1.CallStatus_CALL_STATUS_QUEUED {
			t.Fatalf("CallTool = %v, %v", rc, err)
		}
		<-env.Primary.Internals().TestToolkit.Started("no-wait")
		got, err := env.Runtime.GetToolCall(ctx, &responsev1.GetToolCallRequest{ResponseId: id, CallId: callID, Wait: durationpb.New(time.Millisecond)})
		if err != nil || got.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_RUNNING {
			t.Fatalf("GetToolCall = %v, %v", got, err)
		}
		env.Primary.Internals().TestToolkit.Release("no-wait")
		got, err = env.Runtime.GetToolCall(ctx, &responsev1.GetToolCallRequest{ResponseId: id, CallId: callID, Wait: durationpb.New(time.Minute)})
		if err != nil || got.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Fatalf("GetToolCall after release = %v, %v", got, err)
		}
	})

	t.Run("ArgumentsAreStrictAndBounded", func(t *testing.T) {
		pad := func(total int) string { // {"p":"xxx…"} of exactly total bytes
			return `{"p":"` + strings.Repeat("x", total-len(`{"p":""}`)) + `"}`
		}
		if rc, err := call(uuid.NewString(), "echo", pad(64*1024), 10*time.Second); err != nil || rc.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Errorf("64 KiB of arguments: %v, %v", rc, err)
		}
		for name, args := range map[string]string{
			"OneByteOver64KiB": pad(64*1024 + 1), "DuplicateKeys": `{"a":1,"a":2}`, "NotAnObject": `[1]`,
			"NaN": `{"a":NaN}`, "TwoValues": `{} {}`, "Truncated": `{"a":`,
		} {
			if _, err := call(uuid.NewString(), "echo", args, 0); status.Code(err) != codes.InvalidArgument {
				t.Errorf("%s: %v, want InvalidArgument", name, err)
			}
		}
		if rc, err := call(uuid.NewString(), "sleep", `{"seconds":"1"}`, 10*time.Second); err != nil ||
			rc.GetStatus() != responsev1.CallStatus_CALL_STATUS_FAILED || !strings.Contains(rc.GetOutcomeJson(), "Invalid tool arguments") {
			t.Errorf("arguments against the schema: %v, %v", rc, err)
		}
	})

	t.Run("RequestFieldsAreBounded", func(t *testing.T) {
		long := strings.Repeat("é", 129)
		for name, req := range map[string]*responsev1.CallToolRequest{
			"CallIDNotAUUID":       {ResponseId: id, CallId: "nope", Toolkit: "test", Function: "echo"},
			"ToolkitOver128":       {ResponseId: id, CallId: uuid.NewString(), Toolkit: long, Function: "echo"},
			"EmptyFunction":        {ResponseId: id, CallId: uuid.NewString(), Toolkit: "test"},
			"WaitOverSixtySeconds": {ResponseId: id, CallId: uuid.NewString(), Toolkit: "test", Function: "echo", Wait: durationpb.New(time.Minute + time.Nanosecond)},
			"NegativeWait":         {ResponseId: id, CallId: uuid.NewString(), Toolkit: "test", Function: "echo", Wait: durationpb.New(-time.Second)},
		} {
			if _, err := env.Runtime.CallTool(ctx, req); status.Code(err) != codes.InvalidArgument {
				t.Errorf("%s: %v, want InvalidArgument", name, err)
			}
		}
		if rc, err := call(uuid.NewString(), "echo", `{}`, time.Minute); err != nil || rc.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Errorf("a wait of exactly 60 s: %v, %v", rc, err)
		}
		if _, err := env.Runtime.CallTool(ctx, &responsev1.CallToolRequest{ResponseId: id, CallId: uuid.NewString(),
			Toolkit: strings.Repeat("é", 128), Function: "echo"}); err != nil {
			t.Errorf("a 128-character toolkit name is admitted (and fails as unknown): %v", err)
		}
		for name, req := range map[string]*responsev1.ListToolsRequest{
			"LimitOver1000":      {ResponseId: id, Limit: 1001},
			"CursorOver1024":     {ResponseId: id, Cursor: strings.Repeat("a", 1025)},
			"CursorNotFromAList": {ResponseId: id, Cursor: "bogus"},
		} {
			if _, err := env.Runtime.ListTools(ctx, req); status.Code(err) != codes.InvalidArgument {
				t.Errorf("%s: %v, want InvalidArgument", name, err)
			}
		}
		if page, err := env.Runtime.ListTools(ctx, &responsev1.ListToolsRequest{ResponseId: id, Limit: 1000}); err != nil || page.GetNextCursor() != "" {
			t.Errorf("a limit of 1000: %v, %v", page, err)
		}
		for name, req := range map[string]*responsev1.SearchToolsRequest{
			"EmptyQuery": {ResponseId: id}, "QueryOver1024": {ResponseId: id, Query: strings.Repeat("q", 1025)},
			"LimitOver100": {ResponseId: id, Query: "echo", Limit: 101},
		} {
			if _, err := env.Runtime.SearchTools(ctx, req); status.Code(err) != codes.InvalidArgument {
				t.Errorf("%s: %v, want InvalidArgument", name, err)
			}
		}
		if _, err := env.Runtime.SearchTools(ctx, &responsev1.SearchToolsRequest{ResponseId: id, Query: strings.Repeat("q", 1024), Limit: 100}); err != nil {
			t.Errorf("a 1024-character query with limit 100: %v", err)
		}
		_, err := env.Runtime.GetToolCall(ctx, &responsev1.GetToolCallRequest{ResponseId: id, CallId: uuid.NewString()})
		if status.Code(err) != codes.NotFound {
			t.Errorf("GetToolCall of an unknown call: %v, want NotFound", err)
		}
	})

	t.Run("FenceRefusesNewCallsButReplays", func(t *testing.T) {
		fid := openStandard(t, env)
		known := uuid.NewString()
		if _, err := env.Runtime.CallTool(ctx, &responsev1.CallToolRequest{ResponseId: fid, CallId: known, Toolkit: "test", Function: "echo",
			Wait: durationpb.New(10 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Runtime.FenceResponse(ctx, &responsev1.FenceResponseRequest{ResponseId: fid}); err != nil {
			t.Fatal(err)
		}
		_, err := env.Runtime.CallTool(ctx, &responsev1.CallToolRequest{ResponseId: fid, CallId: uuid.NewString(), Toolkit: "test", Function: "echo"})
		if status.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "Call cancelled before dispatch") {
			t.Errorf("new call on a fenced response: %v, want Aborted", err)
		}
		res, err := env.Runtime.CallTool(ctx, &responsev1.CallToolRequest{ResponseId: fid, CallId: known, Toolkit: "test", Function: "echo"})
		if err != nil || res.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Errorf("replay on a fenced response: %v, %v", res, err)
		}
		if _, err := env.Runtime.RetireCatalog(ctx, &responsev1.RetireCatalogRequest{ResponseId: fid}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Runtime.ListTools(ctx, &responsev1.ListToolsRequest{ResponseId: fid}); status.Code(err) != codes.InvalidArgument ||
			!strings.Contains(err.Error(), clierr.CatalogRebuilding) {
			t.Errorf("ListTools while retired: %v", err)
		}
		if _, err := env.Runtime.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: fid}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Runtime.GetToolCall(ctx, &responsev1.GetToolCallRequest{ResponseId: fid, CallId: known}); status.Code(err) != codes.NotFound {
			t.Errorf("GetToolCall after close: %v, want NotFound", err)
		}
	})
}

// TestNativeCallsShareTheResponseLimits: native calls are receipts of the response, held
// under its 64 concurrent operations and 1024 receipts together with its shells' calls, and
// operators see them.
func TestNativeCallsShareTheResponseLimits(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	id := openStandard(t, env)
	native := func(function, args string) (string, error) {
		callID := uuid.NewString()
		_, err := env.Runtime.CallTool(ctx, &responsev1.CallToolRequest{ResponseId: id, CallId: callID, Toolkit: "test",
			Function: function, ArgumentsJson: args})
		return callID, err
	}
	gated := make([]string, response.MaxConcurrent)
	for i := range gated {
		var err error
		if gated[i], err = native("gate", fmt.Sprintf(`{"name":"limit-%d"}`, i)); err != nil {
			t.Fatalf("gated call %d: %v", i, err)
		}
	}
	if _, err := native("echo", `{}`); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), clierr.ConcurrencyLimit) {
		t.Errorf("the 65th concurrent call: %v, want ResourceExhausted", err)
	}
	run := env.RunBash(t, id, "over-limit", `mindroom-agent tools call test.echo '{}'; echo "exit=$?"`)
	if !strings.Contains(run.Stdout, "At most 64 CLI operations") || !strings.Contains(run.Stdout, "exit=2") {
		t.Errorf("a Bash call over the shared limit: %q", run.Stdout)
	}

	r, _ := env.Primary.Internals().Responses.Get(id)
	in := r.Inspect(1)
	if in.ReceiptCount != response.MaxConcurrent || len(in.Windows) != 2 || in.Windows[0].BashCallID != "" ||
		in.Windows[0].Admitted != response.MaxConcurrent || in.Receipts[0].Parent != "" {
		t.Errorf("operators see %+v, want %d receipts in the native window", in, response.MaxConcurrent)
	}
	for i := range gated {
		env.Primary.Internals().TestToolkit.Release(fmt.Sprintf("limit-%d", i))
	}
	// The released calls settle, and free their places, before the budget is spent.
	for i, callID := range gated {
		got, err := env.Runtime.GetToolCall(ctx, &responsev1.GetToolCallRequest{ResponseId: id, CallId: callID, Wait: durationpb.New(time.Minute)})
		if err != nil || got.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
			t.Fatalf("released call %d: %v, %v", i, got, err)
		}
	}

	// Up to 1024 receipts in all: the rest of the budget natively, then one more is refused.
	for i := response.MaxConcurrent; i < response.MaxReceipts; i++ {
		if _, err := env.Runtime.CallTool(ctx, &responsev1.CallToolRequest{ResponseId: id, CallId: uuid.NewString(), Toolkit: "test",
			Function: "echo", Wait: durationpb.New(10 * time.Second)}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, err := native("echo", `{}`); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), clierr.ReceiptLimit) {
		t.Errorf("receipt 1025: %v, want ResourceExhausted", err)
	}
}

// TestBashResultSaysWhenTheTurnEnds: a Bash command whose window completed a call of a function
// that ends the turn says so in its result; a refused one does not.
func TestBashResultSaysWhenTheTurnEnds(t *testing.T) {
	env := testenv.Start(t)
	id := env.Open(t) // minimal: the shell may start background commands
	run := env.RunBash(t, id, "refused", `mindroom-agent tools call interaction.run_in_background '{"command":"true"}'`)
	if run.Result.GetEndsTurn() || run.Result.GetReceipts()[0].GetStatus() != responsev1.CallStatus_CALL_STATUS_FAILED {
		t.Errorf("refused in ask mode: ends_turn %v, receipts %v", run.Result.GetEndsTurn(), run.Result.GetReceipts())
	}
	if code, out := operatorREST(t, env, http.MethodPost, "/v1/operator/conversations:setMode",
		`{"conversation":{"channel":"!room:example.org","thread":"$thread"},"mode":"MODE_AUTO"}`); code != http.StatusOK {
		t.Fatalf("setMode: %d %v", code, out)
	}
	run = env.RunBash(t, id, "saved", `mindroom-agent tools call test.echo '{}' && mindroom-agent tools call interaction.run_in_background '{"command":"true"}'`)
	rcs := run.Result.GetReceipts()
	if !run.Result.GetEndsTurn() || len(rcs) != 2 || !rcs[1].GetTraits().GetEndsTurn() || rcs[0].GetTraits().GetEndsTurn() {
		t.Errorf("saved for approval: ends_turn %v, receipts %v (stderr %q)", run.Result.GetEndsTurn(), rcs, run.Stderr)
	}
}

// TestNativeRequestApprovalOverREST is the whole path a runtime takes for a standard turn: its
// shell cannot see request_approval, the runtime calls it natively over REST, an operator
// approves, the receipt completes with the decision, and a replay returns the same receipt.
func TestNativeRequestApprovalOverREST(t *testing.T) {
	env := testenv.Start(t)
	code, opened := runtimeREST(t, env, http.MethodPost, "/v1/responses",
		`{"agent_name":"tester","requester_id":"@alice:example.org","conversation":{"channel":"!room","thread":"$t"}}`)
	if code != http.StatusOK {
		t.Fatalf("open: %d %v", code, opened)
	}
	id := opened["response_id"].(string)
	t.Cleanup(func() { runtimeREST(t, env, http.MethodPost, "/v1/responses/"+id+":close", "") })

	code, bash := runtimeRESTRaw(t, env, http.MethodPost, "/v1/responses/"+id+"/bash",
		`{"bash_call_id":"look","command":"mindroom-agent tools describe interaction.request_approval >/dev/null 2>&1; echo describe=$?"}`)
	if code != http.StatusOK || !strings.Contains(string(bash), `"exit_code":0`) || !strings.Contains(string(bash), "ZGVzY3JpYmU9Mgo=") { // "describe=2\n"
		t.Fatalf("the standard shell's describe: %d %s", code, bash)
	}
	code, d := runtimeREST(t, env, http.MethodGet, "/v1/responses/"+id+"/tools:describe?toolkit=interaction&function=request_approval", "")
	if code != http.StatusOK || d["traits"].(map[string]any)["user_input"] != true {
		t.Fatalf("describe natively: %d %v", code, d)
	}

	callID := uuid.NewString()
	body := fmt.Sprintf(`{"call_id":%q,"toolkit":"interaction","function":"request_approval","arguments_json":%q}`, callID, `{"details":"deploy v2"}`)
	code, first := runtimeREST(t, env, http.MethodPost, "/v1/responses/"+id+"/calls", body)
	receipt, _ := first["receipt"].(map[string]any)
	if code != http.StatusOK || receipt["call_id"] != callID || receipt["parent_bash_call_id"] != "" {
		t.Fatalf("call: %d %v", code, first)
	}

	promptID := ""
	for deadline := time.Now().Add(20 * time.Second); promptID == ""; time.Sleep(20 * time.Millisecond) {
		_, list := operatorREST(t, env, http.MethodGet, "/v1/operator/prompts?status=PROMPT_STATUS_PENDING", "")
		for _, p := range list["prompts"].([]any) {
			if m := p.(map[string]any); m["call_id"] == callID {
				promptID = fmt.Sprint(m["id"])
			}
		}
		if promptID == "" && time.Now().After(deadline) {
			t.Fatal("the approval never reached the operators")
		}
	}
	if code, out := operatorREST(t, env, http.MethodPost, "/v1/operator/prompts/"+promptID+":decide", `{"decision":"DECISION_APPROVE"}`); code != http.StatusOK {
		t.Fatalf("decide: %d %v", code, out)
	}
	code, got := runtimeREST(t, env, http.MethodGet, "/v1/responses/"+id+"/calls/"+callID+"?wait=30s", "")
	receipt, _ = got["receipt"].(map[string]any)
	if code != http.StatusOK || receipt["status"] != "CALL_STATUS_COMPLETED" ||
		receipt["outcome_json"] != `"{\"approved\":true,\"decided_by\":\"admin\",\"feedback\":\"\"}"` {
		t.Fatalf("after the decision: %d %v", code, got)
	}
	code, replay := runtimeREST(t, env, http.MethodPost, "/v1/responses/"+id+"/calls", body)
	if code != http.StatusOK || fmt.Sprint(replay) != fmt.Sprint(got) {
		t.Errorf("replay: %d %v, want %v", code, replay, got)
	}
	other := strings.Replace(body, "deploy v2", "deploy v3", 1)
	if code, out := runtimeREST(t, env, http.MethodPost, "/v1/responses/"+id+"/calls", other); code != http.StatusConflict {
		t.Errorf("the same call id for other arguments: %d %v, want 409", code, out)
	}
}
