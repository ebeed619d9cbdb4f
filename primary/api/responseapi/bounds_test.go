package responseapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
)

// TestOpenResponseBounds: the runtime may open responses up to the primary's and its
// credential's limits, over gRPC and REST alike; the one past a limit is RESOURCE_EXHAUSTED
// (HTTP 429) naming the limit's flag, and closing a response makes room again.
func TestOpenResponseBounds(t *testing.T) {
	for _, tc := range []struct {
		name              string
		perPrimary, perCr int
		flag              string
	}{
		{"PerCredential", 5, 2, "--max-open-responses-per-credential"},
		{"PerPrimary", 2, 5, "--max-open-responses)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
				c.Responses.MaxOpen, c.Responses.MaxOpenPerCredential = tc.perPrimary, tc.perCr
			}))
			first := env.Open(t)
			env.Open(t) // the maximum: 2 open
			_, err := env.Runtime.OpenResponse(ctx, &responsev1.OpenResponseRequest{AgentName: "tester"})
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), tc.flag) {
				t.Fatalf("one over the limit over gRPC: %v, want RESOURCE_EXHAUSTED naming %s", err, tc.flag)
			}
			code, body := postREST(t, env, "/v1/responses", `{"agent_name":"tester"}`)
			if code != http.StatusTooManyRequests || !strings.Contains(body, tc.flag) {
				t.Fatalf("one over the limit over REST: %d %s, want 429 naming %s", code, body, tc.flag)
			}
			if _, err := env.Runtime.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: first}); err != nil {
				t.Fatal(err)
			}
			if code, body := postREST(t, env, "/v1/responses", `{"agent_name":"tester"}`); code != http.StatusOK {
				t.Fatalf("after a close, over REST: %d %s", code, body)
			}
		})
	}
}

// postREST posts body to the runtime's REST API with the runtime credential.
func postREST(t *testing.T, env *testenv.Env, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.HTTPURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestUnknownEnumIsRefused: an enum number the proto does not declare is INVALID_ARGUMENT over
// gRPC and 400 over REST, never read as unspecified.
func TestUnknownEnumIsRefused(t *testing.T) {
	env := testenv.Start(t)
	for name, req := range map[string]*responsev1.OpenResponseRequest{
		"Origin99":    {AgentName: "tester", Origin: 99},
		"ShellMode99": {AgentName: "tester", ShellMode: 99},
	} {
		if _, err := env.Runtime.OpenResponse(context.Background(), req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s over gRPC: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	for name, body := range map[string]string{
		"Origin99":    `{"agent_name":"tester","origin":99}`,
		"ShellMode99": `{"agent_name":"tester","shell_mode":99}`,
	} {
		if code, resp := postREST(t, env, "/v1/responses", body); code != http.StatusBadRequest {
			t.Errorf("%s over REST: %d %s, want 400", name, code, resp)
		}
	}
	if n := env.Primary.Internals().Responses.Len(); n != 0 {
		t.Errorf("%d responses opened", n)
	}
}

// TestRESTBodyLimit: a REST body of exactly primary.MaxRESTBody bytes is read (and judged on
// its content), one byte more is 413, whether the client declares its length or streams it.
func TestRESTBodyLimit(t *testing.T) {
	env := testenv.Start(t)
	body := func(size int) string { // valid JSON of exactly size bytes, with a too long requester
		const head, tail = `{"agent_name":"tester","requester_id":"`, `"}`
		return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
	}
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		want    int
	}{
		{"MaximumIsRead", primary.MaxRESTBody, false, http.StatusBadRequest},
		{"OneOverIs413", primary.MaxRESTBody + 1, false, http.StatusRequestEntityTooLarge},
		{"MaximumStreamedIsRead", primary.MaxRESTBody, true, http.StatusBadRequest},
		{"OneOverStreamedIs413", primary.MaxRESTBody + 1, true, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(body(tc.size))
			if tc.chunked {
				r = io.MultiReader(r) // hides the length: sent chunked
			}
			req, err := http.NewRequest(http.MethodPost, env.HTTPURL+"/v1/responses", r)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("%d bytes: %d %.200s, want %d", tc.size, resp.StatusCode, b, tc.want)
			}
		})
	}
}
