package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

// browser is an HTTP client with a cookie jar, signed in to the dashboard.
type browser struct {
	t      *testing.T
	origin string
	client *http.Client
	csrf   string
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func adminToken(t *testing.T, env *testenv.Env) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(env.StateDir, "credentials", "operator-admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(raw))
}

func signIn(t *testing.T, env *testenv.Env, credential string) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, origin: env.HTTPURL, client: &http.Client{Jar: jar, Timeout: 20 * time.Second}}
	resp, body := b.post("/ui/signin", url.Values{"credential": {credential}}, nil)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/ui/inbox" {
		t.Fatalf("sign-in ended at %s with %d: %s", resp.Request.URL.Path, resp.StatusCode, body)
	}
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the inbox: %s", body)
	}
	b.csrf = m[1]
	return b
}

// post sends a form as a same-origin browser would, with extra headers.
func (b *browser) post(path string, form url.Values, header http.Header) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.origin+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.origin)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range header {
		req.Header[k] = v
	}
	return b.do(req)
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.origin+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	env := testenv.Start(t)
	b := signIn(t, env, adminToken(t, env))
	for _, path := range []string{"/ui/signin", "/ui/inbox", "/ui/jobs", "/ui/questions", "/ui/static/app.js", "/ui/jobs/999"} {
		t.Run(strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
			resp, _ := b.get(path)
			h := resp.Header
			csp := h.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("CSP %q allows inline code", csp)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("nosniff %q, referrer policy %q", h.Get("X-Content-Type-Options"), h.Get("Referrer-Policy"))
			}
		})
	}
}

func TestSessionCookie(t *testing.T) {
	env := testenv.Start(t)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(env.HTTPURL+"/ui/signin", url.Values{"credential": {adminToken(t, env)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 {
		t.Fatalf("sign-in: %d with cookies %v", resp.StatusCode, cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui/" || c.Secure || strings.Contains(c.Value, adminToken(t, env)) {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/ui/, not Secure over plain HTTP, not the credential", c)
	}
}

func TestSignIn(t *testing.T) {
	env := testenv.Start(t)
	t.Run("AWrongCredentialIsRefused", func(t *testing.T) {
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar}
		resp, err := client.PostForm(env.HTTPURL+"/ui/signin", url.Values{"credential": {"not-a-credential"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
			t.Errorf("status %d, cookies %v", resp.StatusCode, resp.Cookies())
		}
	})
	t.Run("PagesNeedASession", func(t *testing.T) {
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(env.HTTPURL + "/ui/inbox")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/signin" {
			t.Errorf("status %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("SignOutEndsTheSessionOnTheServer", func(t *testing.T) {
		b := signIn(t, env, adminToken(t, env))
		cookies := b.client.Jar.Cookies(&url.URL{Scheme: "http", Host: strings.TrimPrefix(env.HTTPURL, "http://"), Path: "/ui/"})
		if resp, _ := b.post("/ui/signout", url.Values{"csrf": {b.csrf}}, nil); resp.Request.URL.Path != "/ui/signin" {
			t.Fatalf("sign-out ended at %s", resp.Request.URL.Path)
		}
		// The old cookie, replayed, no longer opens anything.
		req, _ := http.NewRequest(http.MethodGet, env.HTTPURL+"/ui/inbox/items", nil)
		req.Header.Set("X-Requested-With", "fetch")
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("replayed cookie: %d, want 401", resp.StatusCode)
		}
	})
}

// pendingApproval saves a durable approval directly, as run_in_background in auto mode does.
func pendingApproval(t *testing.T, env *testenv.Env) int64 {
	t.Helper()
	ap, _, err := env.Primary.Internals().Store.SaveApproval(context.Background(), store.NewApproval{
		Kind: "command", Channel: "!room", Thread: "$t", Author: "@alice", Agent: "tester",
		Command: "echo hi", Workdir: "/tmp", Ceiling: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ap.ID
}

func approvalStatus(t *testing.T, env *testenv.Env, id int64) store.ApprovalStatus {
	t.Helper()
	ap, err := env.Primary.Internals().Store.Approval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ap.Status
}

func TestStateChangesNeedTheSessionsToken(t *testing.T) {
	env := testenv.Start(t)
	b := signIn(t, env, adminToken(t, env))
	id := pendingApproval(t, env)
	path := "/ui/approvals/" + strconv.FormatInt(id, 10) + "/decide"
	other := signIn(t, env, adminToken(t, env))
	for _, tc := range []struct {
		name   string
		form   url.Values
		header http.Header
		want   int
	}{
		{"WithoutAToken", url.Values{"decision": {"deny"}}, nil, http.StatusForbidden},
		{"WithAnotherSessionsToken", url.Values{"decision": {"deny"}, "csrf": {other.csrf}}, nil, http.StatusForbidden},
		{"FromAnotherSite", url.Values{"decision": {"deny"}, "csrf": {b.csrf}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{"FromAnotherOrigin", url.Values{"decision": {"deny"}, "csrf": {b.csrf}},
			http.Header{"Origin": {"http://evil.example"}, "Sec-Fetch-Site": nil}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if resp, body := b.post(path, tc.form, tc.header); resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if st := approvalStatus(t, env, id); st != store.ApprovalPending {
				t.Errorf("the approval is %s, want it still pending", st)
			}
		})
	}
	t.Run("WithTheTokenItIsDecided", func(t *testing.T) {
		resp, body := b.post(path, url.Values{"decision": {"deny"}, "csrf": {b.csrf}, "text": {"no"}}, nil)
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/ui/inbox" {
			t.Fatalf("status %d at %s: %s", resp.StatusCode, resp.Request.URL.Path, body)
		}
		if st := approvalStatus(t, env, id); st != store.ApprovalDenied {
			t.Errorf("the approval is %s, want denied", st)
		}
	})
}

func TestAMemberSeesNoAdminActionAndTheServerRefusesIt(t *testing.T) {
	env := testenv.Start(t)
	token, err := operators.Add(context.Background(), env.Primary.Internals().Store, "mia", store.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	id := pendingApproval(t, env)
	b := signIn(t, env, token)
	_, inbox := b.get("/ui/inbox")
	if !strings.Contains(inbox, "approval-"+strconv.FormatInt(id, 10)) || strings.Contains(inbox, `value="approve"`) {
		t.Fatalf("the member's inbox should show the approval without an Approve button:\n%s", inbox)
	}
	resp, body := b.post("/ui/approvals/"+strconv.FormatInt(id, 10)+"/decide", url.Values{"decision": {"approve"}, "csrf": {b.csrf}}, nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a member's approve: %d, want 403: %s", resp.StatusCode, body)
	}
	if st := approvalStatus(t, env, id); st != store.ApprovalPending {
		t.Errorf("the approval is %s, want it still pending", st)
	}
}
