package agentcli_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
)

// Section 2: any other method on the two paths is 405 with a {"detail"} body.
func TestWrongMethodIs405(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	rc := s.call("test", "echo", `{}`)
	callPath := callsPath + rc.CallID

	cases := []struct{ method, label, path, allow string }{
		{http.MethodGet, "Operations", operationsPath, http.MethodPost},
		{http.MethodPut, "Operations", operationsPath, http.MethodPost},
		{http.MethodDelete, "Operations", operationsPath, http.MethodPost},
		{http.MethodPatch, "Operations", operationsPath, http.MethodPost},
		{http.MethodOptions, "Operations", operationsPath, http.MethodPost},
		{http.MethodPost, "ACall", callPath, http.MethodGet},
		{http.MethodPut, "ACall", callPath, http.MethodGet},
		{http.MethodDelete, "ACall", callPath, http.MethodGet},
		{http.MethodPatch, "ACall", callPath, http.MethodGet},
		{http.MethodPost, "ANonUUIDCall", callsPath + "not-a-uuid", http.MethodGet},
	}
	for _, tc := range cases {
		for _, auth := range []struct {
			name string
			opt  option
		}{{"WithGrant", func(*http.Request) {}}, {"WithoutGrant", authorization()}} {
			t.Run(tc.method+"On"+tc.label+auth.name+"Is405", func(t *testing.T) {
				r := s.do(tc.method, tc.path, []byte(`{"operation":"tools.list"}`), auth.opt)
				requireStatus(t, r, http.StatusMethodNotAllowed, "")
				if got := r.header.Get("Allow"); got != tc.allow {
					t.Errorf("Allow = %q, want %q", got, tc.allow)
				}
			})
		}
	}
	t.Run("HeadOnEitherPathIs405", func(t *testing.T) {
		for _, p := range []string{operationsPath, callPath} {
			if r := s.do(http.MethodHead, p, nil); r.code != http.StatusMethodNotAllowed {
				t.Errorf("HEAD %s: %s", p, r)
			}
		}
	})
	t.Run("TheCallWasNeitherDeletedNorReplaced", func(t *testing.T) {
		if got := decodeReceipt(t, s.get(rc.CallID, "")); got.CallID != rc.CallID {
			t.Fatalf("receipt %s", got.raw)
		}
	})
	t.Run("OtherPathsAreNotFound", func(t *testing.T) {
		for _, p := range []string{"/api/agent-cli/operations/", "/api/agent-cli/calls/" + uuid.NewString() + "/x", "/api/agent-cli/", "/"} {
			requireStatus(t, s.do(http.MethodGet, p, nil), http.StatusNotFound, "")
		}
	})
}
