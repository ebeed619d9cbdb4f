package primary

import (
	"net/http"
	"strings"
)

// maxRESTBody bounds a REST request body; it matches gRPC's default message limit, which the
// same request would meet on the gRPC path.
const maxRESTBody = 4 << 20

// restEdge guards the REST API listener, which may face a network: a request must carry a
// credential of some role (a role credential or an operator's) before its body is read, and
// the body is capped. Which role may call
// which service is still decided by the gRPC interceptors behind the gateway.
func (p *Primary) restEdge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || len(r.Header.Values("Authorization")) != 1 || !(p.policy.KnownCredential(token) || p.operatorAuth.Known(r.Context(), token)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":16,"message":"missing or invalid credential for this API","details":[]}`))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxRESTBody)
		next.ServeHTTP(w, r)
	})
}
