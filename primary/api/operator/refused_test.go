package operator_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/operators"
)

// retryDelay is the RetryInfo delay a status carries (0 when none).
func retryDelay(err error) time.Duration {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration()
		}
	}
	return 0
}

// TestRefusedCredentialsAreLimitedPerAddress sends credentials from loopback, as an attacker on
// the primary's host would, over REST and over gRPC on a loopback port: both doors count
// against one budget per address, and a valid credential is served from a limited address.
func TestRefusedCredentialsAreLimitedPerAddress(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	env := testenv.Start(t, testenv.WithGRPCOnLoopback(), testenv.WithConfig(func(c *primary.Config) { c.Clock = clk }))
	ctx := context.Background()
	admin := adminToken(t, env)
	whoami := func(token string) error {
		_, err := operatorv1.NewOperatorServiceClient(dial(t, env, token)).WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
		return err
	}
	rest := func(token string) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, env.HTTPURL+"/v1/operator/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatalf("answer %q is not JSON: %v", raw, err)
		}
		return resp, body
	}

	t.Run("RESTAnswersTheLimitThRefusal401", func(t *testing.T) {
		for i := 1; i <= authlimit.DefaultBurst; i++ {
			if resp, body := rest(operators.NewCredential()); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Retry-After") != "" {
				t.Fatalf("refusal %d: %d, Retry-After %q: %v; want 401 alone", i, resp.StatusCode, resp.Header.Get("Retry-After"), body)
			}
		}
	})
	t.Run("RESTAnswersTheNext429WithRetryAfter", func(t *testing.T) {
		resp, body := rest(operators.NewCredential())
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "6" || body["code"] != float64(codes.ResourceExhausted) {
			t.Fatalf("refusal %d: %d, Retry-After %q: %v; want 429, 6, code 8", authlimit.DefaultBurst+1, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	})
	t.Run("RESTServesAValidCredentialFromTheLimitedAddress", func(t *testing.T) {
		if resp, body := rest(admin); resp.StatusCode != http.StatusOK || body["name"] != operators.FirstAdmin {
			t.Fatalf("the admin over REST: %d %v", resp.StatusCode, body)
		}
	})
	t.Run("GRPCSharesTheAddresssBudget", func(t *testing.T) {
		err := whoami(operators.NewCredential())
		if status.Code(err) != codes.ResourceExhausted || retryDelay(err) != authlimit.DefaultEvery {
			t.Fatalf("a refused credential over gRPC from the limited address: %v (retry %v), want RESOURCE_EXHAUSTED with %v",
				err, retryDelay(err), authlimit.DefaultEvery)
		}
		_, err = responsev1.NewResponseServiceClient(dial(t, env, operators.NewCredential())).OpenResponse(ctx, &responsev1.OpenResponseRequest{})
		wantCode(t, "a refused runtime credential from the limited address", err, codes.ResourceExhausted)
	})
	t.Run("GRPCServesAValidCredentialFromTheLimitedAddress", func(t *testing.T) {
		if err := whoami(admin); err != nil {
			t.Fatalf("the admin over gRPC: %v", err)
		}
	})
	t.Run("AfterTheRetryDelayOneMoreRefusalIsUnauthenticated", func(t *testing.T) {
		clk.Advance(authlimit.DefaultEvery)
		wantCode(t, "the refusal after the delay", whoami(operators.NewCredential()), codes.Unauthenticated)
		wantCode(t, "the refusal after that", whoami(operators.NewCredential()), codes.ResourceExhausted)
	})
}
