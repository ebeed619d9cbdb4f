package client

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestWireBodies(t *testing.T) {
	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte("{\n  \"city\": \"Lisboa\",\n  \"days\": 3\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(args string) string {
		return `{"arguments":` + args + `,"call_id":"` + testCallID + `","function":"forecast","operation":"tools.call","toolkit":"weather"}`
	}
	tests := []struct {
		name  string
		args  []string
		stdin string
		body  string
	}{
		{"ToolsListDefaults", []string{"tools", "list"}, "", `{"operation":"tools.list"}`},
		{"ToolsListPage", []string{"tools", "list", "--limit=5", "--cursor", "c1"}, "", `{"cursor":"c1","limit":5,"operation":"tools.list"}`},
		{"ToolsSearch", []string{"tools", "search", "send message", "--toolkit", "slack", "--limit", "3"}, "", `{"limit":3,"operation":"tools.search","query":"send message","toolkit":"slack"}`},
		{"ToolsSearchJoinsWords", []string{"tools", "search", "send", "message"}, "", `{"operation":"tools.search","query":"send message"}`},
		{"ToolsDescribeDotted", []string{"tools", "describe", "a.b.c"}, "", `{"function":"c","operation":"tools.describe","toolkit":"a.b"}`},
		{"ToolsDescribeTwoWords", []string{"tools", "describe", "weather", "forecast"}, "", `{"function":"forecast","operation":"tools.describe","toolkit":"weather"}`},
		{"ToolsCallNoInput", []string{"tools", "call", "weather.forecast", "--call-id", testCallID}, "", call(`{}`)},
		{"ToolsCallTrailing", []string{"tools", "call", "--call-id", testCallID, "weather.forecast", `{"days":3, "city":"Lisboa"}`}, "", call(`{"city":"Lisboa","days":3}`)},
		{"ToolsCallTwoWordsTrailing", []string{"tools", "call", "weather", "forecast", `{"x":1.0}`, "--call-id=" + testCallID}, "", call(`{"x":1.0}`)},
		{"ToolsCallJSON", []string{"tools", "call", "weather.forecast", "--json", `{"a":"é<>&"}`, "--call-id", testCallID}, "", call(`{"a":"é<>&"}`)},
		{"ToolsCallJSONFile", []string{"tools", "call", "weather.forecast", "--json-file", file, "--call-id", testCallID}, "", call(`{"city":"Lisboa","days":3}`)},
		{"ToolsCallJSONStdin", []string{"tools", "call", "weather.forecast", "--json-stdin", "--call-id", testCallID}, `{"requester_id":"x"}`, call(`{"requester_id":"x"}`)},
		{"ToolsCallCallIDSentAsGiven", []string{"tools", "call", "weather.forecast", "--call-id", "{" + strings.ToUpper(testCallID) + "}"}, "",
			`{"arguments":{},"call_id":"{` + strings.ToUpper(testCallID) + `}","function":"forecast","operation":"tools.call","toolkit":"weather"}`},
		{"ContextList", []string{"context", "list", "--limit", "2"}, "", `{"limit":2,"operation":"context.list"}`},
		{"ContextRead", []string{"context", "read", "tool-schema-1", "--offset", "8000", "--limit", "100"}, "", `{"limit":100,"name":"tool-schema-1","offset":8000,"operation":"context.read"}`},
		{"ContextReadDefaults", []string{"context", "read", "notes"}, "", `{"name":"notes","operation":"context.read"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
				if strings.Contains(body, "tools.call") {
					answer(w, 200, receipt(testCallID, StatusCompleted))
					return
				}
				answer(w, 200, `{"items":[]}`)
			})
			runCLI(t, srv.env(), tt.stdin, tt.args...).wantCode(t, ExitCompleted)
			reqs := srv.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.method != http.MethodPost || r.path != "/api/agent-cli/operations" || r.query != "" {
				t.Fatalf("request %s %s?%s", r.method, r.path, r.query)
			}
			if r.body != tt.body {
				t.Fatalf("body\n got %s\nwant %s", r.body, tt.body)
			}
			if got := r.header.Get("Authorization"); got != "Bearer "+testToken {
				t.Fatalf("Authorization %q", got)
			}
			if got := r.header.Get("Content-Type"); got != "application/json" {
				t.Fatalf("Content-Type %q", got)
			}
			if got := r.header.Get(windowHeader); got != testWindow {
				t.Fatalf("window header %q", got)
			}
		})
	}
}

func TestWindowHeaderOnlyWhenSet(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) { answer(w, 200, `{"items":[]}`) })
	env := srv.env()
	delete(env, envWindow)
	runCLI(t, env, "", "tools", "list").wantCode(t, ExitCompleted)
	if h := srv.requests()[0].header; len(h.Values(windowHeader)) != 0 {
		t.Fatalf("window header sent: %q", h.Values(windowHeader))
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		code     int
		fragment string // of the error message; empty for a result
	}{
		{"Completed", 200, receipt(testCallID, StatusCompleted), ExitCompleted, ""},
		{"Failed", 200, receipt(testCallID, StatusFailed), ExitFailed, ""},
		{"Cancelled", 200, receipt(testCallID, StatusCancelled), ExitFailed, ""},
		{"Queued", 200, receipt(testCallID, StatusQueued), ExitPending, ""},
		{"Running", 200, receipt(testCallID, StatusRunning), ExitPending, ""},
		{"Waiting", 200, receipt(testCallID, StatusWaiting), ExitPending, ""},
		{"Unauthorized", 401, `{"detail":"Agent CLI authority is unavailable"}`, ExitUnavailable, "Agent CLI authority is unavailable"},
		{"BadRequest", 400, `{"detail":"bad"}`, ExitInvalid, "Agent CLI request was rejected: bad"},
		{"Conflict", 409, `{"detail":"Call ID already belongs to a different operation"}`, ExitInvalid, "Agent CLI request was rejected: Call ID already belongs to a different operation"},
		{"TooLarge", 413, `{"detail":"Agent CLI request exceeds 64 KiB"}`, ExitInvalid, "Agent CLI request was rejected: Agent CLI request exceeds 64 KiB"},
		{"Unprocessable", 422, `{"detail":"Invalid Agent CLI operation"}`, ExitInvalid, "Agent CLI request was rejected: Invalid Agent CLI operation"},
		{"UnprocessableListDetail", 422, `{"detail":[{"loc":["body"],"msg":"x"}]}`, ExitInvalid, `Agent CLI request was rejected: [{"loc":["body"],"msg":"x"}]`},
		{"RejectedWithoutDetail", 409, `oops`, ExitInvalid, "Agent CLI request was rejected: HTTP 409 Conflict"},
		{"InternalError", 500, `{"detail":"boom"}`, ExitUnavailable, "HTTP 500: boom"},
		{"NotFound", 404, `{"detail":"Not Found"}`, ExitUnavailable, "HTTP 404"},
		{"MethodNotAllowed", 405, `{"detail":"Method Not Allowed"}`, ExitUnavailable, "HTTP 405"},
		{"InvalidJSON", 200, `{"status":"completed"`, ExitUnavailable, "is invalid"},
		{"DuplicateKeys", 200, `{"status":"completed","status":"failed"}`, ExitUnavailable, "is invalid"},
		{"NotAnObject", 200, `[]`, ExitUnavailable, "is invalid"},
		{"UnknownStatus", 200, `{"status":"exploded"}`, ExitUnavailable, "no known status"},
		{"Oversized", 200, `{"a":"` + strings.Repeat("x", 65536) + `"}`, ExitUnavailable, "exceeds 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) { answer(w, tt.status, tt.body) })
			o := runCLI(t, srv.env(), "", "tools", "call", "weather.forecast", "--call-id", testCallID, "--timeout", "0")
			if tt.fragment == "" {
				o.wantCode(t, tt.code)
				if want := tt.body + "\n"; o.stdout != want {
					t.Fatalf("stdout %q, want %q", o.stdout, want)
				}
				return
			}
			m := o.wantError(t, tt.code, tt.fragment)
			if m["call_id"] != testCallID {
				t.Fatalf("call_id %v", m["call_id"])
			}
			if strings.Contains(o.stdout+o.stderr, testToken) {
				t.Fatal("token printed")
			}
		})
	}
}

func TestDiscoveryOutputIsCanonical(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		answer(w, 200, "{ \"next_cursor\" : null,\n \"items\" : [ {\"toolkit\":\"é<>\", \"deferred\":true, \"n\": 1.0, \"description\":\"\\u00e9\"} ] }")
	})
	o := runCLI(t, srv.env(), "", "tools", "list")
	o.wantCode(t, ExitCompleted)
	if want := `{"items":[{"deferred":true,"description":"é","n":1.0,"toolkit":"é<>"}],"next_cursor":null}` + "\n"; o.stdout != want {
		t.Fatalf("stdout %q, want %q", o.stdout, want)
	}
}

func TestEnvironmentIsValidatedOnlyBeforeARequest(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) { answer(w, 200, `{"items":[]}`) })
	good := srv.env()
	with := func(k, v string) map[string]string {
		env := map[string]string{}
		for key, val := range good {
			env[key] = val
		}
		env[k] = v
		return env
	}
	t.Run("TrailingSlashIsTolerated", func(t *testing.T) {
		runCLI(t, with(envURL, srv.srv.URL+"/"), "", "tools", "list").wantCode(t, ExitCompleted)
	})
	bad := map[string]map[string]string{
		"MissingURL":      with(envURL, ""),
		"FTPScheme":       with(envURL, strings.Replace(srv.srv.URL, "http", "ftp", 1)),
		"NoScheme":        with(envURL, strings.TrimPrefix(srv.srv.URL, "http://")),
		"Path":            with(envURL, srv.srv.URL+"/api"),
		"Query":           with(envURL, srv.srv.URL+"?a=b"),
		"EmptyQuery":      with(envURL, srv.srv.URL+"?"),
		"Fragment":        with(envURL, srv.srv.URL+"#x"),
		"UserInfo":        with(envURL, strings.Replace(srv.srv.URL, "http://", "http://u:p@", 1)),
		"PortOutOfRange":  with(envURL, "http://127.0.0.1:70000"),
		"NoHost":          with(envURL, "http://"),
		"MissingToken":    with(envToken, ""),
		"TokenWithSpace":  with(envToken, testToken+" x"),
		"TokenNonASCII":   with(envToken, testToken+"é"),
		"TokenTooLong":    with(envToken, strings.Repeat("a", 4097)),
		"WindowInjection": with(envWindow, "w\r\nX-Evil: 1"),
	}
	for name, env := range bad {
		t.Run(name, func(t *testing.T) {
			o := runCLI(t, env, "", "tools", "list")
			o.wantError(t, ExitUnavailable, "Agent CLI authority is unavailable")
			if strings.Contains(o.stdout+o.stderr, testToken) {
				t.Fatal("token printed")
			}
		})
	}
	if n := len(srv.requests()); n != 1 {
		t.Fatalf("%d requests reached the server, want 1", n)
	}
	t.Run("LongestTokenIsAccepted", func(t *testing.T) {
		runCLI(t, with(envToken, strings.Repeat("a", 4096)), "", "tools", "list").wantCode(t, ExitCompleted)
	})
}

func TestUnreachableURLNamesTheURLNotTheToken(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + lis.Addr().String()
	lis.Close()
	env := map[string]string{envURL: url, envToken: testToken}
	o := runCLI(t, env, "", "tools", "call", "k.f", "--call-id", testCallID)
	m := o.wantError(t, ExitUnavailable, url+"/api/agent-cli/operations")
	if m["call_id"] != testCallID || strings.Contains(o.stdout+o.stderr, testToken) {
		t.Fatalf("output %q", o.stdout)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
		answer(w, 200, `{"items":[]}`)
	}))
	t.Cleanup(other.Close)
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	o := runCLI(t, srv.env(), "", "tools", "list")
	o.wantError(t, ExitUnavailable, "HTTP 307")
	if leaked.Load() != 0 {
		t.Fatal("the redirect target saw a request")
	}
}

func TestProxyEnvironmentIsIgnored(t *testing.T) {
	// net/http reads the proxy variables once per process, so check the transport as well.
	if tr := newHTTPClient(nil).Transport.(*http.Transport); tr.Proxy != nil {
		t.Fatal("transport has a proxy function")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadProxy := "http://" + lis.Addr().String()
	lis.Close()
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) { answer(w, 200, `{"items":[]}`) })
	env := srv.env()
	// A host name that is not loopback, so net/http's proxy rules would apply to it; the test
	// dialer sends it to the fake server.
	env[envURL] = "http://agent-cli.test:80"
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		t.Setenv(k, deadProxy)
		env[k] = deadProxy
	}
	t.Setenv("NO_PROXY", "")
	var dialed atomic.Value
	o := runApp(t, func(a *app) {
		a.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialed.Store(addr)
			return (&net.Dialer{}).DialContext(ctx, network, srv.srv.Listener.Addr().String())
		}
	}, env, "", "tools", "list")
	o.wantCode(t, ExitCompleted)
	if got := dialed.Load(); got != "agent-cli.test:80" {
		t.Fatalf("dialed %v, want the server itself", got)
	}
}

func TestConnectionIsReused(t *testing.T) {
	var conns atomic.Int32
	var gets atomic.Int32
	countConns := func(s *http.Server) {
		s.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
	}
	srv := newFakeServerWith(t, countConns, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.Method == http.MethodPost || gets.Add(1) < 3 {
			answer(w, 200, receipt(testCallID, StatusRunning))
			return
		}
		answer(w, 200, receipt(testCallID, StatusCompleted))
	})
	runCLI(t, srv.env(), "", "tools", "call", "k.f").wantCode(t, ExitCompleted)
	if n := len(srv.requests()); n < 3 || conns.Load() != 1 {
		t.Fatalf("%d requests over %d connections", n, conns.Load())
	}
}

func TestCallIDIsInEveryCallError(t *testing.T) {
	env := map[string]string{envURL: "http://127.0.0.1:1", envToken: testToken}
	cases := map[string][]string{
		"MissingFunction": {"tools", "call", "slack"},
		"UnknownFlag":     {"tools", "call", "k.f", "--bogus"},
		"TwoInputs":       {"tools", "call", "k.f", "{}", "--json", "{}"},
		"BadJSON":         {"tools", "call", "k.f", "{"},
		"BadTimeout":      {"tools", "call", "k.f", "--timeout", "x"},
		"Unreachable":     {"tools", "call", "k.f"},
	}
	for name, args := range cases {
		t.Run(name+"Generated", func(t *testing.T) {
			o := runCLI(t, env, "", args...)
			m := o.wantError(t, o.code, "")
			id, _ := m["call_id"].(string)
			if canonical, ok := parseUUID(id); !ok || canonical != id || id[14] != '4' {
				t.Fatalf("call_id %q is not a fresh v4 UUID", id)
			}
		})
		t.Run(name+"Given", func(t *testing.T) {
			o := runCLI(t, env, "", append(args, "--call-id", "URN:UUID:"+testCallID)...)
			if m := o.wantError(t, o.code, ""); m["call_id"] != "URN:UUID:"+testCallID {
				t.Fatalf("call_id %v", m["call_id"])
			}
		})
	}
	t.Run("MissingEnvironment", func(t *testing.T) {
		o := runCLI(t, nil, "", "tools", "call", "k.f", "--call-id", testCallID)
		if m := o.wantError(t, ExitUnavailable, envURL); m["call_id"] != testCallID {
			t.Fatalf("call_id %v", m["call_id"])
		}
	})
}

func TestErrorOutputIsCanonical(t *testing.T) {
	o := runCLI(t, nil, "", "tools", "call", "k.f", "--call-id", testCallID)
	var m map[string]string
	if err := json.Unmarshal([]byte(o.stdout), &m); err != nil {
		t.Fatal(err)
	}
	if want := `{"call_id":"` + testCallID + `","error":` + jsonString(m["error"]) + "}\n"; o.stdout != want {
		t.Fatalf("stdout %q, want %q", o.stdout, want)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
}
