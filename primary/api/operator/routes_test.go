package operator_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/fieldrule"
	"github.com/turncli/turncli/internal/testenv"
)

// These tables drive the whole primary (testenv) over REST, which reaches the gRPC services
// through the gateway: a REST status proves the gRPC code it was mapped from, and the body's
// code field names that code.

// restCall sends one REST request to env's primary and returns its status and body.
func restCall(t *testing.T, env *testenv.Env, token, method, path, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, env.HTTPURL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// grpcCode is the gRPC code a REST error body names.
func grpcCode(body string) int {
	var e struct {
		Code int `json:"code"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Code
}

const (
	unknownResponse = "00000000-0000-4000-8000-000000000000"
	unknownCall     = "00000000-0000-4000-8000-000000000001"
)

// TestEveryByIDRouteAnswersNotFoundForAnUnknownID: a get, decide or cancel of a record, or a
// use of a response, window or call, that does not exist is NOT_FOUND (404), whichever
// service it is on. CloseResponse is not here: closing is idempotent by its contract, so an
// unknown response is closed already.
func TestEveryByIDRouteAnswersNotFoundForAnUnknownID(t *testing.T) {
	env := testenv.Start(t)
	admin, runtime := adminToken(t, env), env.Primary.RuntimeToken()
	live := env.Open(t)
	for _, tc := range []struct{ name, token, method, path, body string }{
		{"GetJob", admin, "GET", "/v1/operator/jobs/999999", ""},
		{"GetJobLog", admin, "GET", "/v1/operator/jobs/999999/log", ""},
		{"CancelJob", admin, "POST", "/v1/operator/jobs/999999:cancel", "{}"},
		{"GetApproval", admin, "GET", "/v1/operator/approvals/999999", ""},
		{"DecideApproval", admin, "POST", "/v1/operator/approvals/999999:decide", `{"decision":2,"text":"no"}`},
		{"GetPrompt", admin, "GET", "/v1/operator/prompts/999999", ""},
		{"DecidePrompt", admin, "POST", "/v1/operator/prompts/999999:decide", `{"decision":2,"text":"no"}`},
		{"GetQuestion", admin, "GET", "/v1/operator/questions/999999", ""},
		{"SaveQuestionDraft", admin, "POST", "/v1/operator/questions/999999:saveDraft", `{"revision":1,"answers_json":"{}"}`},
		{"SubmitQuestionAnswers", admin, "POST", "/v1/operator/questions/999999:submit", `{"revision":1,"answers_json":"{}"}`},
		{"CancelQuestion", admin, "POST", "/v1/operator/questions/999999:cancel", "{}"},
		{"GetCallApproval", admin, "GET", "/v1/operator/call-approvals/999999", ""},
		{"DecideCallApproval", admin, "POST", "/v1/operator/call-approvals/999999:decide", `{"decision":2}`},
		{"AnIDOfZero", admin, "GET", "/v1/operator/approvals/0", ""},
		{"RevokePermissionAllowance", admin, "POST", "/v1/operator/permissionAllowances:revoke",
			`{"conversation":{"channel":"room"},"tool_name":"Bash","scope":2}`},
		{"OpenWindowOfAnUnknownResponse", runtime, "POST", "/v1/responses/" + unknownResponse + "/windows", `{"bash_call_id":"b1"}`},
		{"GetWindowOfAnUnknownResponse", runtime, "GET", "/v1/responses/" + unknownResponse + "/windows/b1", ""},
		{"GetAnUnknownWindow", runtime, "GET", "/v1/responses/" + live + "/windows/b1", ""},
		{"CloseWindowOfAnUnknownResponse", runtime, "POST", "/v1/responses/" + unknownResponse + "/windows/b1:close", "{}"},
		{"CloseAnUnknownWindow", runtime, "POST", "/v1/responses/" + live + "/windows/b1:close", "{}"},
		{"FenceResponse", runtime, "POST", "/v1/responses/" + unknownResponse + ":fence", "{}"},
		{"RetireCatalog", runtime, "POST", "/v1/responses/" + unknownResponse + ":retireCatalog", "{}"},
		{"RebindCatalog", runtime, "POST", "/v1/responses/" + unknownResponse + ":rebindCatalog", "{}"},
		{"ListTools", runtime, "GET", "/v1/responses/" + unknownResponse + "/tools", ""},
		{"DescribeTool", runtime, "GET", "/v1/responses/" + unknownResponse + "/tools:describe?toolkit=test&function=echo", ""},
		{"CallToolOfAnUnknownResponse", runtime, "POST", "/v1/responses/" + unknownResponse + "/calls",
			`{"call_id":"` + unknownCall + `","toolkit":"test","function":"echo","arguments_json":"{}"}`},
		{"GetToolCallOfAnUnknownResponse", runtime, "GET", "/v1/responses/" + unknownResponse + "/calls/" + unknownCall, ""},
		{"GetAnUnknownToolCall", runtime, "GET", "/v1/responses/" + live + "/calls/" + unknownCall, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := restCall(t, env, tc.token, tc.method, tc.path, tc.body)
			if code != http.StatusNotFound || grpcCode(body) != 5 {
				t.Fatalf("%d %s, want 404 NOT_FOUND", code, body)
			}
		})
	}
}

// TestEveryRouteAppliesTheSameFieldRule: on every route that takes an id or a name, the
// longest value its kind allows passes the rule, and one over it or one with a control
// character is INVALID_ARGUMENT (400) naming the field, with the same words everywhere.
func TestEveryRouteAppliesTheSameFieldRule(t *testing.T) {
	env := testenv.Start(t)
	admin, runtime := adminToken(t, env), env.Primary.RuntimeToken()
	live := env.Open(t)
	long := func(k fieldrule.Kind) (max, over string) {
		switch k {
		case fieldrule.ResponseID:
			return strings.Repeat("r", fieldrule.MaxResponseID), strings.Repeat("r", fieldrule.MaxResponseID+1)
		case fieldrule.CallID:
			return unknownCall, unknownCall + "0"
		case fieldrule.BashCallID:
			return strings.Repeat("b", fieldrule.MaxBashCallID), strings.Repeat("b", fieldrule.MaxBashCallID+1)
		case fieldrule.AgentName:
			return strings.Repeat("a", fieldrule.MaxAgentName), strings.Repeat("a", fieldrule.MaxAgentName+1)
		case fieldrule.OperatorName:
			return strings.Repeat("o", fieldrule.MaxOperatorName), strings.Repeat("o", fieldrule.MaxOperatorName+1)
		case fieldrule.Flag:
			return strings.Repeat("f", fieldrule.MaxFlag), strings.Repeat("f", fieldrule.MaxFlag+1)
		case fieldrule.Surface:
			return strings.Repeat("s", fieldrule.MaxSurface), strings.Repeat("s", fieldrule.MaxSurface+1)
		case fieldrule.ChatUserID:
			return strings.Repeat("u", fieldrule.MaxChatUserID), strings.Repeat("u", fieldrule.MaxChatUserID+1)
		case fieldrule.Person:
			return strings.Repeat("p", fieldrule.MaxPerson), strings.Repeat("p", fieldrule.MaxPerson+1)
		}
		return strings.Repeat("c", fieldrule.MaxIdentity), strings.Repeat("c", fieldrule.MaxIdentity+1)
	}
	q := url.QueryEscape
	// Each route names the field it sets and builds its request from the field's value.
	for _, tc := range []struct {
		route, field string
		token        string
		request      func(v string) (method, path, body string)
	}{
		{"OpenResponse", "agent_name", runtime, func(v string) (string, string, string) {
			return "POST", "/v1/responses", `{"agent_name":` + jsonString(v) + `}`
		}},
		{"OpenResponse", "requester_id", runtime, func(v string) (string, string, string) {
			return "POST", "/v1/responses", `{"agent_name":"code","requester_id":` + jsonString(v) + `}`
		}},
		{"OpenResponse", "conversation.channel", runtime, func(v string) (string, string, string) {
			return "POST", "/v1/responses", `{"agent_name":"code","conversation":{"channel":` + jsonString(v) + `}}`
		}},
		{"OpenResponse", "conversation.thread", runtime, func(v string) (string, string, string) {
			return "POST", "/v1/responses", `{"agent_name":"code","conversation":{"channel":"room","thread":` + jsonString(v) + `}}`
		}},
		{"OpenResponse", "worker_key", runtime, func(v string) (string, string, string) {
			return "POST", "/v1/responses", `{"agent_name":"code","worker_key":` + jsonString(v) + `}`
		}},
		{"OpenResponse", "flags", runtime, func(v string) (string, string, string) {
			return "POST", "/v1/responses", `{"agent_name":"code","flags":[` + jsonString(v) + `]}`
		}},
		{"OpenWindow", "bash_call_id", runtime, func(v string) (string, string, string) {
			return "POST", "/v1/responses/" + live + "/windows", `{"bash_call_id":` + jsonString(v) + `}`
		}},
		{"GetWindow", "bash_call_id", runtime, func(v string) (string, string, string) {
			return "GET", "/v1/responses/" + live + "/windows/" + url.PathEscape(v), ""
		}},
		{"GetWindow", "response_id", runtime, func(v string) (string, string, string) {
			return "GET", "/v1/responses/" + url.PathEscape(v) + "/windows/b1", ""
		}},
		{"CloseResponse", "response_id", runtime, func(v string) (string, string, string) {
			return "POST", "/v1/responses/" + url.PathEscape(v) + ":close", "{}"
		}},
		{"GetToolCall", "call_id", runtime, func(v string) (string, string, string) {
			return "GET", "/v1/responses/" + live + "/calls/" + url.PathEscape(v), ""
		}},
		{"StopThread", "conversation.thread", runtime, func(v string) (string, string, string) {
			return "POST", "/v1/conversations:stopThread", `{"conversation":{"channel":"room","thread":` + jsonString(v) + `}}`
		}},
		{"ListProgress", "response_id", admin, func(v string) (string, string, string) {
			return "GET", "/v1/operator/progress?response_id=" + q(v), ""
		}},
		{"ListProgress", "conversation.channel", admin, func(v string) (string, string, string) {
			return "GET", "/v1/operator/progress?conversation.channel=" + q(v), ""
		}},
		{"ListJobs", "conversation.thread", admin, func(v string) (string, string, string) {
			return "GET", "/v1/operator/jobs?conversation.channel=room&conversation.thread=" + q(v), ""
		}},
		{"ListQuestions", "requester", admin, func(v string) (string, string, string) {
			return "GET", "/v1/operator/questions?requester=" + q(v), ""
		}},
		{"ListAuditLog", "actor", admin, func(v string) (string, string, string) {
			return "GET", "/v1/operator/audit?actor=" + q(v), ""
		}},
		{"GetConversationMode", "conversation.channel", admin, func(v string) (string, string, string) {
			return "GET", "/v1/operator/conversations:getMode?conversation.channel=" + q(v), ""
		}},
		{"GetShellMode", "agent_name", admin, func(v string) (string, string, string) {
			return "GET", "/v1/operator/shellModes?conversation.channel=room&agent_name=" + q(v), ""
		}},
		{"SetShellMode", "worker_key", admin, func(v string) (string, string, string) {
			return "POST", "/v1/operator/shellModes:set", `{"conversation":{"channel":"room"},"agent_name":"code","worker_key":` + jsonString(v) + `}`
		}},
		{"ListIdentityLinks", "surface", admin, func(v string) (string, string, string) {
			return "GET", "/v1/operator/identity-links?surface=" + q(v), ""
		}},
		{"ListIdentityLinks", "person", admin, func(v string) (string, string, string) {
			return "GET", "/v1/operator/identity-links?person=" + q(v), ""
		}},
		{"LinkIdentity", "chat_user_id", admin, func(v string) (string, string, string) {
			return "POST", "/v1/operator/identity-links", `{"surface":"matrix","person":"ada","chat_user_id":` + jsonString(v) + `}`
		}},
		{"UnlinkIdentity", "surface", admin, func(v string) (string, string, string) {
			return "POST", "/v1/operator/identity-links:unlink", `{"chat_user_id":"u","surface":` + jsonString(v) + `}`
		}},
	} {
		name := tc.field[strings.LastIndex(tc.field, ".")+1:]
		kind, ok := fieldrule.FieldKind(name)
		if !ok {
			t.Fatalf("%s: no rule for %s", tc.route, tc.field)
		}
		max, over := long(kind)
		t.Run(tc.route+"/"+tc.field, func(t *testing.T) {
			refused := `"` + tc.field + ` must be `
			send := func(v string) (int, string) {
				method, path, body := tc.request(v)
				return restCall(t, env, tc.token, method, path, body)
			}
			if code, body := send(max); strings.Contains(body, refused) {
				t.Errorf("the longest value: %d %s", code, body)
			}
			for what, v := range map[string]string{"OneOver": over, "NUL": max[:len(max)-1] + "\x00", "Newline": "x\ny"} {
				code, body := send(v)
				if code != http.StatusBadRequest || grpcCode(body) != 3 || !strings.Contains(body, refused) {
					t.Errorf("%s: %d %s, want 400 INVALID_ARGUMENT %s…", what, code, body, refused)
				}
			}
		})
	}
}

func jsonString(v string) string {
	b, _ := json.Marshal(v)
	return string(b)
}
