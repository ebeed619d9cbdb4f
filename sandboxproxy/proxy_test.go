package sandboxproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/sandboxproxy"
)

const (
	unauthorized = `{"detail":"Agent CLI authority is unavailable"}`
	operations   = "/api/agent-cli/operations"
	callsPrefix  = "/api/agent-cli/calls/"
)

// window is the Agent CLI environment of one open window.
type window struct {
	url, grant, token string
}

func openWindow(t testing.TB, env *testenv.Env, id, bashCallID string) window {
	t.Helper()
	w, err := env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: id, BashCallId: bashCallID})
	if err != nil {
		t.Fatalf("OpenWindow: %v", err)
	}
	e := w.GetEnvironment()
	return window{url: e["MINDROOM_AGENT_CLI_URL"], grant: e["MINDROOM_AGENT_CLI_TOKEN"], token: e["MINDROOM_AGENT_CLI_WINDOW"]}
}

// reply is everything of an HTTP answer a client can tell apart.
type reply struct {
	status      int
	contentType string
	allow       string
	body        string
}

func (r reply) String() string {
	return fmt.Sprintf("%d %s (Allow %q) %s", r.status, r.contentType, r.allow, r.body)
}

func do(t testing.TB, method, origin, path string, header http.Header, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, origin+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: 20 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Allow"), string(b)}
}

func bearer(grant string) http.Header {
	return http.Header{"Authorization": {"Bearer " + grant}}
}

// setup is a primary with workers a1, a2 (key-a) and b1 (key-b), a response bound to a1 and a
// primary-local response.
type setup struct {
	env            *testenv.Env
	a1, a2, b1     *testenv.Worker
	onA1, local    window
	boundID, locID string
}

func start(t *testing.T) *setup {
	t.Helper()
	s := &setup{env: testenv.Start(t)}
	s.a1 = s.env.StartWorker(t, "key-a", "a1")
	s.boundID = s.env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })
	s.onA1 = openWindow(t, s.env, s.boundID, "bash-a1") // a1 is key-a's only worker yet: bound to it
	if s.onA1.url != s.a1.ProxyURL() {
		t.Fatalf("response bound to %s, want a1's proxy %s", s.onA1.url, s.a1.ProxyURL())
	}
	s.a2 = s.env.StartWorker(t, "key-a", "a2")
	s.b1 = s.env.StartWorker(t, "key-b", "b1")
	s.locID = s.env.Open(t)
	s.local = openWindow(t, s.env, s.locID, "bash-local")
	return s
}

func TestProxyAcceptsAGrantOnlyThroughTheWorkerItsResponseIsBoundTo(t *testing.T) {
	s := start(t)
	const callID = "6f1d2c3b-4a5e-4f60-8172-93a4b5c6d7e8"
	call := `{"operation":"tools.call","call_id":"` + callID + `","toolkit":"test","function":"echo","arguments":{"x":1}}`
	h := bearer(s.onA1.grant)
	h.Set("X-MindRoom-Agent-CLI-Window", s.onA1.token)
	if r := do(t, http.MethodPost, s.a1.ProxyURL(), operations, h, call); r.status != http.StatusOK {
		t.Fatalf("call through its own worker: %v", r)
	}
	spoofed := bearer(s.onA1.grant)
	spoofed.Set("Turncli-Worker-Id", "a1")
	spoofed.Set("Grpc-Metadata-Turncli-Worker-Id", "a1")
	spoofed.Set("Grpc-Metadata-Turncli-Worker-Credential", testenv.WorkerCredential("key-a"))

	cases := []struct {
		name   string
		origin string
		header http.Header
		want   int
	}{
		{"GrantThroughItsOwnWorkersProxyIsAccepted", s.a1.ProxyURL(), bearer(s.onA1.grant), http.StatusOK},
		{"GrantThroughOtherWorkerOfTheSameKeyIsRejected", s.a2.ProxyURL(), bearer(s.onA1.grant), http.StatusUnauthorized},
		{"GrantThroughWorkerOfAnotherKeyIsRejected", s.b1.ProxyURL(), bearer(s.onA1.grant), http.StatusUnauthorized},
		{"WorkerGrantThroughThePrimarysListenerIsRejected", s.env.AgentCLIURL, bearer(s.onA1.grant), http.StatusUnauthorized},
		{"LocalGrantThroughAWorkerProxyIsRejected", s.a1.ProxyURL(), bearer(s.local.grant), http.StatusUnauthorized},
		{"HeadersClaimingTheBoundWorkerChangeNothing", s.b1.ProxyURL(), spoofed, http.StatusUnauthorized},
		// Through the bound worker's own proxy the same headers must not reach the primary
		// either: forwarded, they would double the identity metadata and turn 200 into 401.
		{"HeadersClaimingAnIdentityAreNotForwarded", s.a1.ProxyURL(), spoofed, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, req := range []struct{ method, path, body string }{
				{http.MethodPost, operations, `{"operation":"tools.list","limit":1}`},
				{http.MethodGet, callsPrefix + callID, ""},
			} {
				r := do(t, req.method, tc.origin, req.path, tc.header.Clone(), req.body)
				if r.status != tc.want {
					t.Errorf("%s %s: %v, want %d", req.method, req.path, r, tc.want)
				}
				if tc.want == http.StatusUnauthorized && (r.body != unauthorized || r.contentType != "application/json") {
					t.Errorf("%s %s: %v, want the uniform 401 body", req.method, req.path, r)
				}
			}
		})
	}
}

// TestProxyAnswersAreByteIdenticalToThePrimarysListener sends the same requests to the primary's
// loopback listener (with a local response's grant) and to a worker's proxy (with its bound
// response's grant): everything a client can see must be the same.
func TestProxyAnswersAreByteIdenticalToThePrimarysListener(t *testing.T) {
	s := start(t)
	type target struct {
		origin string
		w      window
	}
	targets := []target{{s.env.AgentCLIURL, s.local}, {s.a1.ProxyURL(), s.onA1}}
	auth := func(w window) http.Header { return bearer(w.grant) }
	withWindow := func(w window) http.Header {
		h := bearer(w.grant)
		h.Set("X-MindRoom-Agent-CLI-Window", w.token)
		return h
	}
	callBody := `{"operation":"tools.call","call_id":"0b7c5a2e-8d41-4c3f-9e6a-1f2d3c4b5a69","toolkit":"test","function":"echo","arguments":{}}`
	cases := []struct {
		name   string
		method string
		path   string
		header func(window) http.Header
		body   string
		want   int
	}{
		{"ToolsListSucceedsIdentically", http.MethodPost, operations, auth, `{"operation":"tools.list","limit":3}`, http.StatusOK},
		{"ToolsSearchSucceedsIdentically", http.MethodPost, operations, auth, `{"operation":"tools.search","query":"echo"}`, http.StatusOK},
		{"MissingAuthorizationIs401", http.MethodPost, operations, func(window) http.Header { return http.Header{} }, `{"operation":"tools.list"}`, http.StatusUnauthorized},
		{"OtherSchemeIs401", http.MethodPost, operations, func(w window) http.Header { return http.Header{"Authorization": {"Basic " + w.grant}} }, `{"operation":"tools.list"}`, http.StatusUnauthorized},
		{"TwoSpacesAfterBearerIs401", http.MethodPost, operations, func(w window) http.Header { return http.Header{"Authorization": {"Bearer  " + w.grant}} }, `{"operation":"tools.list"}`, http.StatusUnauthorized},
		{"UnknownGrantIs401", http.MethodPost, operations, func(window) http.Header { return bearer("unknown-grant") }, `{"operation":"tools.list"}`, http.StatusUnauthorized},
		{"UnknownGrantWithOversizedBodyIs401", http.MethodPost, operations, func(window) http.Header { return bearer("unknown-grant") }, strings.Repeat(" ", 70000), http.StatusUnauthorized},
		{"UnknownGrantWithMalformedBodyIs401", http.MethodPost, operations, func(window) http.Header { return bearer("unknown-grant") }, `{"operation":`, http.StatusUnauthorized},
		{"CallIDThatIsNotAUUIDIs401", http.MethodGet, callsPrefix + "not-a-uuid", auth, "", http.StatusUnauthorized},
		{"UnknownCallIs401", http.MethodGet, callsPrefix + "7d4c1b2a-3e5f-4a6b-8c7d-9e0f1a2b3c4d", auth, "", http.StatusUnauthorized},
		{"GetOnOperationsIs405", http.MethodGet, operations, auth, "", http.StatusMethodNotAllowed},
		{"PutOnOperationsIs405", http.MethodPut, operations, auth, `{}`, http.StatusMethodNotAllowed},
		{"PostOnACallIs405", http.MethodPost, callsPrefix + "7d4c1b2a-3e5f-4a6b-8c7d-9e0f1a2b3c4d", auth, `{}`, http.StatusMethodNotAllowed},
		{"BodyOver64KiBIs413", http.MethodPost, operations, auth, `{"operation":"tools.list","cursor":"` + strings.Repeat("a", 65536) + `"}`, http.StatusRequestEntityTooLarge},
		{"MalformedJSONIs422", http.MethodPost, operations, auth, `{"operation":`, http.StatusUnprocessableEntity},
		{"DuplicateKeyIs422", http.MethodPost, operations, auth, `{"operation":"tools.list","operation":"tools.list"}`, http.StatusUnprocessableEntity},
		{"UnknownOperationIs422", http.MethodPost, operations, auth, `{"operation":"tools.delete"}`, http.StatusUnprocessableEntity},
		{"IdentityFieldIs422", http.MethodPost, operations, auth, `{"operation":"tools.list","worker_id":"a1"}`, http.StatusUnprocessableEntity},
		{"StringLimitIs422", http.MethodPost, operations, auth, `{"operation":"tools.list","limit":"5"}`, http.StatusUnprocessableEntity},
		{"DescribeWithoutWindowIs409", http.MethodPost, operations, auth, `{"operation":"tools.describe","toolkit":"test","function":"echo"}`, http.StatusConflict},
		{"BadCursorIs422", http.MethodPost, operations, auth, `{"operation":"tools.list","cursor":"garbage"}`, http.StatusUnprocessableEntity},
		{"CallWithoutWindowIs409", http.MethodPost, operations, auth, callBody, http.StatusConflict},
		{"CallInAnUnknownWindowIs409", http.MethodPost, operations, func(w window) http.Header {
			h := bearer(w.grant)
			h.Set("X-MindRoom-Agent-CLI-Window", "no-such-window")
			return h
		}, callBody, http.StatusConflict},
		{"UnknownPathIs404", http.MethodPost, "/api/agent-cli/other", auth, `{}`, http.StatusNotFound},
		{"CallInItsWindowIsQueued", http.MethodPost, operations, withWindow, callBody, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]reply
			for i, tg := range targets {
				got[i] = do(t, tc.method, tg.origin, tc.path, tc.header(tg.w), tc.body)
			}
			if got[0].status != tc.want {
				t.Errorf("primary listener: %v, want status %d", got[0], tc.want)
			}
			if tc.name == "CallInItsWindowIsQueued" {
				// The receipts name different Bash calls; everything else is the same.
				got[0].body = strings.Replace(got[0].body, "bash-local", "bash-a1", 1)
			}
			if got[0] != got[1] {
				t.Errorf("answers differ:\nprimary %v\nproxy   %v", got[0], got[1])
			}
		})
	}
}

// rawPost sends only the head of a POST that announces a body of contentLength bytes, plus the
// first bytes of it, and returns the answer the server gives without the rest.
func rawPost(t *testing.T, origin, grant string, contentLength int, sent []byte) reply {
	t.Helper()
	u, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A server that waited for the announced body would wait forever; the deadline fails it.
	if err := conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		operations, u.Host, grant, contentLength)
	if _, err := conn.Write(append([]byte(head), sent...)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Allow"), string(b)}
}

func TestProxyChecksTheGrantBeforeReadingTheBody(t *testing.T) {
	s := start(t)
	for _, tg := range []struct {
		name   string
		origin string
		w      window
	}{{"Proxy", s.a1.ProxyURL(), s.onA1}, {"PrimaryListener", s.env.AgentCLIURL, s.local}} {
		t.Run(tg.name+"RefusesABadGrantWithoutWaitingForAHugeBody", func(t *testing.T) {
			r := rawPost(t, tg.origin, "unknown-grant", 1<<30, []byte(`{"operation":`))
			if r.status != http.StatusUnauthorized || r.body != unauthorized {
				t.Fatalf("answer = %v, want the uniform 401", r)
			}
		})
		t.Run(tg.name+"RefusesAGoodGrantsHugeBodyAfter64KiB", func(t *testing.T) {
			r := rawPost(t, tg.origin, tg.w.grant, 1<<30, bytes.Repeat([]byte(" "), 64*1024+1))
			if r.status != http.StatusRequestEntityTooLarge || r.body != `{"detail":"Agent CLI request exceeds 64 KiB"}` {
				t.Fatalf("answer = %v, want 413", r)
			}
		})
	}
}

// TestSidecarProxy runs the proxy alone, on a connection of its own that carries a connected
// worker's identity, as a sidecar next to that worker would.
func TestProxyAsASidecar(t *testing.T) {
	s := start(t)
	cases := []struct {
		name     string
		identity sandboxproxy.Identity
		want     int
	}{
		{"SidecarOfTheBoundWorkerForwardsItsGrant", sandboxproxy.Identity{Credential: testenv.WorkerCredential("key-a"), WorkerID: "a1", Insecure: true}, http.StatusOK},
		{"SidecarOfAnotherWorkerIsRefused", sandboxproxy.Identity{Credential: testenv.WorkerCredential("key-a"), WorkerID: "a2", Insecure: true}, http.StatusUnauthorized},
		{"SidecarWithAWrongCredentialIsRefused", sandboxproxy.Identity{Credential: "forged", WorkerID: "a1", Insecure: true}, http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := grpc.NewClient("passthrough:///primary", grpc.WithContextDialer(s.env.DialPrimary),
				grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(tc.identity))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- sandboxproxy.Serve(ctx, lis, conn, nil) }()
			r := do(t, http.MethodPost, "http://"+lis.Addr().String(), operations, bearer(s.onA1.grant), `{"operation":"tools.list","limit":1}`)
			if r.status != tc.want {
				t.Errorf("answer = %v, want %d", r, tc.want)
			}
			cancel()
			if err := <-served; err != nil {
				t.Errorf("Serve after its context ended: %v", err)
			}
		})
	}
}

func TestProxyIdentity(t *testing.T) {
	id := sandboxproxy.Identity{Credential: "secret", WorkerID: "w1"}
	md, err := id.GetRequestMetadata(context.Background())
	if err != nil || len(md) != 2 || md["turncli-worker-credential"] != "secret" || md["turncli-worker-id"] != "w1" {
		t.Errorf("metadata = %v, %v", md, err)
	}
	if !id.RequireTransportSecurity() {
		t.Error("the credential may travel without TLS although Insecure is false")
	}
	if (sandboxproxy.Identity{Insecure: true}).RequireTransportSecurity() {
		t.Error("Insecure identity still requires TLS")
	}
}
