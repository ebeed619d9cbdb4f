package dashboard_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/api/dashboard"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

// postSignin posts a credential as a browser without a session would, following no redirect,
// and returns the answer's status, its Retry-After and the session cookie it set ("" when none).
func postSignin(t *testing.T, client *http.Client, env *testenv.Env, credential string) (int, string, string) {
	t.Helper()
	resp, err := client.PostForm(env.HTTPURL+"/ui/signin", url.Values{"credential": {credential}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // so that the connection is used again
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "turncli_session" && c.Value != "" {
			return resp.StatusCode, resp.Header.Get("Retry-After"), c.Value
		}
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), ""
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// sessionLive reports whether the session id still opens a page.
func sessionLive(t *testing.T, env *testenv.Env, id string) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, env.HTTPURL+"/ui/inbox/items", nil)
	req.Header.Set("X-Requested-With", "fetch")
	req.AddCookie(&http.Cookie{Name: "turncli_session", Value: id})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true
	case http.StatusUnauthorized:
		return false
	}
	t.Fatalf("inbox items with a session cookie: %d", resp.StatusCode)
	return false
}

func TestAMembersSignInsNeverLockOutAnAdmin(t *testing.T) {
	env := testenv.Start(t)
	member, err := operators.Add(context.Background(), env.Primary.Internals().Store, "mia", store.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	const signIns, workers = 10_000, 8
	ids := make([]string, signIns)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < signIns; i += workers {
				code, _, id := postSignin(t, noRedirects, env, member)
				if code != http.StatusSeeOther || id == "" {
					t.Errorf("member sign-in %d: %d, session %q", i, code, id)
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	t.Run("TheAdminStillSignsIn", func(t *testing.T) {
		signIn(t, env, adminToken(t, env))
	})
	// One by one now, so that which session is the oldest is known.
	var last []string
	for range dashboard.DefaultMaxSessionsPerOperator + 1 {
		_, _, id := postSignin(t, noRedirects, env, member)
		last = append(last, id)
	}
	t.Run("TheMembersOldestSessionIsEnded", func(t *testing.T) {
		if sessionLive(t, env, last[0]) {
			t.Fatal("the member's oldest session outlived a sign-in past the limit")
		}
		for i, id := range last[1:] {
			if !sessionLive(t, env, id) {
				t.Fatalf("the member's session %d of the newest %d ended", i+1, dashboard.DefaultMaxSessionsPerOperator)
			}
		}
	})
	t.Run("TheMemberHasNoMoreLiveSessionsThanTheLimit", func(t *testing.T) {
		for i, id := range ids {
			if sessionLive(t, env, id) {
				t.Fatalf("sign-in %d of the first %d is still live beside the newest %d", i, signIns, dashboard.DefaultMaxSessionsPerOperator)
			}
		}
	})
}

// eventStream opens the dashboard's event stream as b and returns its body once the watch is
// in place (the "ready" event).
func eventStream(t *testing.T, b *browser) *bufio.Reader {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.origin+"/ui/events", nil)
	resp, err := (&http.Client{Jar: b.client.Jar}).Do(req) // no timeout: the stream is endless
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream ended before it was ready: %v", err)
		}
		if strings.HasPrefix(line, "event: ready") {
			return r
		}
	}
}

func TestARemovedOperatorsSessionsEndAtOnce(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	token, err := operators.Add(ctx, env.Primary.Internals().Store, "mia", store.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	member, other := signIn(t, env, token), signIn(t, env, token)
	stream := eventStream(t, member)
	admin := signIn(t, env, adminToken(t, env))

	// Removed as `mindroom-primary operators remove` removes one, and then nobody calls: the
	// member's open event stream, which a failing request would never notice, ends by itself.
	if err := env.Primary.Internals().Store.RemoveOperator(ctx, "mia"); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := stream.ReadString('\n'); err != nil {
			break
		}
	}
	for name, b := range map[string]*browser{"the streaming one": member, "another": other} {
		if resp, _ := b.get("/ui/inbox"); resp.Request.URL.Path != "/ui/signin" {
			t.Errorf("%s of the removed member's sessions opened %s", name, resp.Request.URL.Path)
		}
	}
	if resp, _ := admin.get("/ui/inbox"); resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/ui/inbox" {
		t.Errorf("the admin's session: %d at %s", resp.StatusCode, resp.Request.URL.Path)
	}
}
