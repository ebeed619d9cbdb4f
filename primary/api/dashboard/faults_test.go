package dashboard_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/logtest"
	"github.com/turncli/turncli/primary/api/dashboard"
)

// failingOperator accepts every credential and fails what the inbox reads with an error that
// is no fault (a broken connection, say): an internal fault of the primary's.
type failingOperator struct {
	operatorv1.OperatorServiceClient
	whoAmI error
}

var errBroken = errors.New("connection to 10.0.0.3:5432 reset")

func (f failingOperator) WhoAmI(context.Context, *operatorv1.WhoAmIRequest, ...grpc.CallOption) (*operatorv1.WhoAmIResponse, error) {
	if f.whoAmI != nil {
		return nil, f.whoAmI
	}
	return &operatorv1.WhoAmIResponse{Name: "ada", Role: operatorv1.Role_ROLE_ADMIN}, nil
}

func (failingOperator) ListApprovals(context.Context, *operatorv1.ListApprovalsRequest, ...grpc.CallOption) (*operatorv1.ListApprovalsResponse, error) {
	return nil, errBroken
}

// lineWithID returns the log line of logs carrying error_id id.
func lineWithID(t *testing.T, logs *logtest.Buffer, id string) map[string]any {
	t.Helper()
	for _, m := range logs.Lines(t) {
		if m[fault.IDKey] == id {
			return m
		}
	}
	t.Fatalf("no log line carries error_id %s:\n%s", id, logs.String())
	return nil
}

var hiddenID = regexp.MustCompile(`\(id ([0-9a-f]{8})\); see the primary&#39;s log`)

func TestInternalFaultsNameTheLogLineThatRecordsThem(t *testing.T) {
	serve := func(t *testing.T, op failingOperator) (*httptest.Server, *logtest.Buffer) {
		logs := &logtest.Buffer{}
		failures, err := authlimit.New(authlimit.Config{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := dashboard.New(dashboard.Config{Operator: op, Failures: failures, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(d.Handler())
		t.Cleanup(srv.Close)
		return srv, logs
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signin := func(t *testing.T, srv *httptest.Server) *http.Response {
		t.Helper()
		resp, err := noRedirect.PostForm(srv.URL+"/ui/signin", url.Values{"credential": {"c"}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	check := func(t *testing.T, resp *http.Response, wantCode int, logs *logtest.Buffer) {
		t.Helper()
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := hiddenID.FindSubmatch(body)
		if resp.StatusCode != wantCode || m == nil {
			t.Fatalf("status %d, body %s: want %d naming an error id", resp.StatusCode, body, wantCode)
		}
		if strings.Contains(string(body), "10.0.0.3") {
			t.Fatalf("the page shows the fault: %s", body)
		}
		if line := lineWithID(t, logs, string(m[1])); line["err"] != errBroken.Error() || line["level"] != "ERROR" {
			t.Fatalf("log line %v does not record the fault", line)
		}
	}

	t.Run("APageThatFailsNamesTheID", func(t *testing.T) {
		srv, logs := serve(t, failingOperator{})
		resp := signin(t, srv)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
			t.Fatalf("sign-in answered %d", resp.StatusCode)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ui/inbox", nil)
		req.AddCookie(resp.Cookies()[0])
		page, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		check(t, page, http.StatusInternalServerError, logs)
	})
	t.Run("ASignInThatCannotBeCheckedNamesTheID", func(t *testing.T) {
		srv, logs := serve(t, failingOperator{whoAmI: errBroken})
		check(t, signin(t, srv), http.StatusServiceUnavailable, logs)
	})
}
