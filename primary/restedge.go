package primary

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/status"

	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/bearer"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/readiness"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/roleauth"
)

// MaxRESTBody bounds a REST request body; it matches gRPC's default message limit, which the
// same request would meet on the gRPC path.
const MaxRESTBody = 4 << 20

// restEdge guards the REST API listener, which may face a network: a request must carry a
// credential of some role (a role credential or an operator's) before its body is read, and
// the body is capped. A refusal counts against the client's address, which past the limit is
// answered 429 with Retry-After instead of 401; a valid credential always passes. Which role
// may call which service is still decided by the gRPC interceptors behind the gateway.
//
// /healthz and /readyz answer without a credential: they say only whether the primary is
// alive and ready, for load balancers that hold none.
func restEdge(next http.Handler, ready *readiness.Checker, policy *roleauth.Policy, operatorAuth *operator.Authenticator, failures *authlimit.Limiter) http.Handler {
	healthz, readyz := readiness.Healthz(), ready.Readyz()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			switch r.URL.Path {
			case readiness.HealthzPath:
				healthz.ServeHTTP(w, r)
				return
			case readiness.ReadyzPath:
				readyz.ServeHTTP(w, r)
				return
			}
		}
		token, ok := bearer.FromHeader(r.Header)
		if !ok || !(policy.KnownCredential(token) || operatorAuth.Known(r.Context(), token)) {
			w.Header().Set("Content-Type", "application/json")
			if retry, limited := failures.FailHTTP(r); limited {
				writeTooManyRefused(w, retry)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":16,"message":"missing or invalid credential for this API","details":[]}`))
			return
		}
		if r.ContentLength > MaxRESTBody {
			writeTooLarge(w)
			return
		}
		r.Body = &cappedBody{ReadCloser: http.MaxBytesReader(w, r.Body, MaxRESTBody)}
		next.ServeHTTP(w, r)
	})
}

// tooLargeBody is the REST API's answer to a body over MaxRESTBody, in the gateway's error shape
// (code 8 is RESOURCE_EXHAUSTED).
const tooLargeBody = `{"code":8,"message":"request body exceeds 4 MiB","details":[]}`

func writeTooLarge(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = w.Write([]byte(tooLargeBody))
}

// writeTooManyRefused answers a refused credential from an address past its limit, in the
// gateway's error shape (code 8 is RESOURCE_EXHAUSTED), with the seconds to wait.
func writeTooManyRefused(w http.ResponseWriter, retry time.Duration) {
	body, _ := json.Marshal(map[string]any{"code": 8, "message": authlimit.Message(retry), "details": []any{}})
	w.Header().Set("Retry-After", authlimit.RetryAfter(retry))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(body)
}

// cappedBody remembers that a read went past the cap, so the gateway's error (it reports any
// body it cannot decode as a bad request) can be answered 413 instead.
type cappedBody struct {
	io.ReadCloser
	exceeded bool
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		b.exceeded = true
	}
	return n, err
}

// restErrors answers 413 for a request whose body went past the cap, and otherwise as the
// gateway does. A failure the gateway answers 500 that hides no fault of the gRPC server's (one
// of the gateway's own, such as a response it could not encode) is hidden here: logged on log
// with an error_id, and answered as the gRPC server answers an internal fault.
func restErrors(log *slog.Logger) runtime.ErrorHandlerFunc {
	return func(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
		if b, ok := r.Body.(*cappedBody); ok && b.exceeded {
			writeTooLarge(w)
			return
		}
		if st := status.Convert(err); runtime.HTTPStatusFromCode(st.Code()) == http.StatusInternalServerError && faultgrpc.HiddenID(st) == "" {
			id := fault.Hide(ctx, log, err, "REST request failed", "method", r.Method, "path", r.URL.Path, "code", st.Code().String())
			err = faultgrpc.Status(ctx, nil, "", fault.Hidden(id, fault.InternalText))
		}
		runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err)
	}
}
