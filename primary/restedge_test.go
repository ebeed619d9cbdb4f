package primary

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
)

func TestRESTInternalErrorsNameTheLogLineThatRecordsThem(t *testing.T) {
	hiddenMessage := regexp.MustCompile(`^internal error \(id ([0-9a-f]{8})\); see the primary's log$`)
	for _, tc := range []struct {
		name   string
		err    error
		logged bool
	}{
		{"TheGatewaysOwnFailureIsHiddenHere", errors.New("proto: cannot encode the response: secret detail"), true},
		{"AFaultTheServerHidPassesAsItCame", faultgrpc.Status(t.Context(), nil, "", fault.Hidden("0badf00d", fault.InternalText)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			handle := restErrors(slog.New(slog.NewJSONHandler(&logs, nil)))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/v1/responses", nil)
			handle(t.Context(), runtime.NewServeMux(), &runtime.JSONPb{}, rec, req, tc.err)
			var body struct {
				Message string
				Details []map[string]any
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusInternalServerError {
				t.Fatalf("answer %d %s (%v)", rec.Code, rec.Body, err)
			}
			m := hiddenMessage.FindStringSubmatch(body.Message)
			if m == nil || len(body.Details) != 1 || body.Details[0]["requestId"] != m[1] {
				t.Fatalf("answer %s: want the internal error naming its id, and a RequestInfo with it", rec.Body)
			}
			if !tc.logged {
				if m[1] != "0badf00d" || logs.Len() != 0 {
					t.Fatalf("id %s, log %q: want the server's id, logged there only", m[1], logs.String())
				}
				return
			}
			var line map[string]any
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil || line[fault.IDKey] != m[1] || line["err"] != tc.err.Error() {
				t.Fatalf("log %q: want one line with error_id %s and the fault (%v)", logs.String(), m[1], err)
			}
		})
	}
}
