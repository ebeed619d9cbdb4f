package sandboxproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/sandboxproxy"
)

// primaryConn stands for the proxy's connection: every grant is good, and every operation
// fails with err.
type primaryConn struct{ err error }

func (c primaryConn) Invoke(_ context.Context, method string, _, _ any, _ ...grpc.CallOption) error {
	if method == agentcliv1.AgentCLIService_Operate_FullMethodName {
		return c.err
	}
	return nil // CheckGrant
}

func (primaryConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("no streams")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var internalDetail = regexp.MustCompile(`^Agent CLI internal error \(id ([0-9a-f]{8})\); see the (primary|worker)'s log$`)

func TestAnInternalErrorNamesTheLogLineThatRecordsIt(t *testing.T) {
	hidden := faultgrpc.Status(t.Context(), nil, "", fault.Hidden("0badf00d", fault.InternalText))
	for _, tc := range []struct {
		name       string
		err        error
		owner      string
		loggedHere bool
		id         string // "" when the proxy makes one
	}{
		{"APrimaryUnreachableIsTheWorkersFault", status.Error(codes.Unavailable, "connection refused: dial tcp 10.0.0.1:7420"), "worker", true, ""},
		{"AFaultThePrimaryHidLeadsToThePrimarysLog", hidden, "primary", false, "0badf00d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &lockedBuffer{}
			h, err := sandboxproxy.NewHandler(t.Context(), primaryConn{tc.err}, slog.New(slog.NewJSONHandler(logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, operations, strings.NewReader(`{"operation":"tools.list"}`))
			req.Header = bearer("g")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var body struct{ Detail string }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusInternalServerError {
				t.Fatalf("answer %d %s (%v)", rec.Code, rec.Body, err)
			}
			m := internalDetail.FindStringSubmatch(body.Detail)
			if m == nil || m[2] != tc.owner || (tc.id != "" && m[1] != tc.id) {
				t.Fatalf("detail %q, want the internal error naming an id in the %s's log", body.Detail, tc.owner)
			}
			if strings.Contains(body.Detail, "10.0.0.1") {
				t.Fatalf("the answer shows the fault: %q", body.Detail)
			}
			var line map[string]any
			if out := logs.String(); tc.loggedHere {
				if err := json.Unmarshal([]byte(out), &line); err != nil || line[fault.IDKey] != m[1] || !strings.Contains(line["err"].(string), "10.0.0.1") {
					t.Fatalf("log %q: want one line with error_id %s and the fault (%v)", out, m[1], err)
				}
			} else if out != "" {
				t.Fatalf("the proxy logged a fault the primary had logged: %s", out)
			}
		})
	}
}
