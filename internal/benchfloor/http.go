package benchfloor

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// Paths the floor serves: the Agent CLI's, so clients need no change to call it.
const (
	OperationsPath  = "/api/agent-cli/operations"
	CallsPathPrefix = "/api/agent-cli/calls/"
)

// HTTPHandler is the net/http floor: a POST to OperationsPath is decoded as JSON and echoed
// back with "status":"queued" added; a GET under CallsPathPrefix answers at once with a
// completed receipt-shaped object naming the call. Both bodies go through encoding/json, so the
// floor pays for one JSON decode and encode per request, as a real JSON API would.
func HTTPHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var reply map[string]any
		switch {
		case r.Method == http.MethodPost && r.URL.Path == OperationsPath:
			body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
			if err != nil {
				http.Error(w, `{"detail":"unreadable body"}`, http.StatusBadRequest)
				return
			}
			if err := json.Unmarshal(body, &reply); err != nil || reply == nil {
				http.Error(w, `{"detail":"invalid JSON"}`, http.StatusUnprocessableEntity)
				return
			}
			reply["status"] = "queued"
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, CallsPathPrefix):
			reply = map[string]any{
				"call_id": strings.TrimPrefix(r.URL.Path, CallsPathPrefix),
				"outcome": map[string]any{}, "status": "completed",
			}
		default:
			http.Error(w, `{"detail":"Not Found"}`, http.StatusNotFound)
			return
		}
		body, _ := json.Marshal(reply)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
