package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/surfaces/links"
)

// The links' public origin and the conversation their items are in.
const (
	linkBase    = "https://turncli.example.org"
	linkChannel = "#deploys"
	linkThread  = "t-1"
)

// linksStart is the fake clock's time when the primary starts.
var linksStart = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// linksPrimary is a primary minting links under base (none: links off) on a fake clock, with
// Ann an admin and Ben a member linked to their mail accounts, and the conversation in the
// auto mode.
func linksPrimary(t *testing.T, base string) (*testenv.Env, *clocktest.Fake) {
	t.Helper()
	clk := clocktest.NewFake(linksStart)
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Shells.EnvAllow = []string{"LANG"}
		c.Clock = clk
		c.Links.BaseURL = base
	}))
	ctx := context.Background()
	db := env.Primary.Internals().Store
	for _, p := range []struct {
		user, name string
		role       store.OperatorRole
	}{{"ann@example.org", "ann", store.RoleAdmin}, {"ben@example.org", "ben", store.RoleMember}} {
		if _, err := operators.Add(ctx, db, p.name, p.role); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.LinkIdentity(ctx, store.NewIdentityLink{Surface: "email", ChatUserID: p.user, Person: p.name}, "admin"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SetConversationMode(ctx, linkChannel, linkThread, store.ModeAuto, "test"); err != nil {
		t.Fatal(err)
	}
	return env, clk
}

// askApproval asks, as Ann's agent, for a background command, which waits for an admin.
func askApproval(t *testing.T, env *testenv.Env, command string) {
	t.Helper()
	resp := env.Open(t, func(o *responsev1.OpenResponseRequest) {
		o.RequesterId = "ann"
		o.Conversation = &conversationv1.Conversation{Channel: linkChannel, Thread: linkThread}
		o.Origin = responsev1.Origin_ORIGIN_FOREGROUND
		o.Flags = append(o.Flags, "requester_trusted")
	})
	raw, _ := json.Marshal(map[string]string{"command": command, "label": "ship"})
	callNative(t, env, resp, "run_in_background", string(raw))
}

// mint asks the primary for the links of key for the email account user.
func mint(env *testenv.Env, key, user string) ([]*threadv1.DecisionLink, error) {
	res, err := threadv1.NewThreadEventServiceClient(env.Conn).MintDecisionLinks(context.Background(), &threadv1.MintDecisionLinksRequest{
		ItemKey: key, Identity: &threadv1.ChatIdentity{Surface: "email", ChatUserId: user},
	})
	return res.GetLinks(), err
}

// restLinks is MintDecisionLinks' answer over REST.
type restLinks struct {
	Links []struct {
		Decision  string `json:"decision"`
		URL       string `json:"url"`
		ExpiresAt string `json:"expires_at"`
	} `json:"links"`
}

// mintOverREST asks for the links through the REST gateway, with the runtime credential.
func mintOverREST(t *testing.T, env *testenv.Env, key, user string) restLinks {
	t.Helper()
	body := `{"identity":{"surface":"email","chat_user_id":"` + user + `"}}`
	req, err := http.NewRequest(http.MethodPost, env.HTTPURL+"/v1/thread-items/"+key+":mintLinks", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out restLinks
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("POST :mintLinks: %s", resp.Status)
	}
	return out
}

// linkOf is the link of decision among ls.
func linkOf(t *testing.T, ls []*threadv1.DecisionLink, decision threadv1.ItemAction) string {
	t.Helper()
	for _, l := range ls {
		if l.GetDecision() == decision {
			return l.GetUrl()
		}
	}
	t.Fatalf("no %v link among %v", decision, ls)
	return ""
}

// open requests a minted link from the primary's REST listener, in place of its public
// origin; form, when not nil, is posted.
func open(t *testing.T, env *testenv.Env, link string, form url.Values, header map[string]string) (int, http.Header, string) {
	t.Helper()
	target := env.HTTPURL + strings.TrimPrefix(link, linkBase)
	method, body := http.MethodGet, io.Reader(nil)
	if form != nil {
		method, body = http.MethodPost, strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(text)
}

var confirmValue = regexp.MustCompile(`name="confirm" value="([^"]+)"`)

// confirmation is the confirming form of a link's page.
func confirmation(t *testing.T, page string) url.Values {
	t.Helper()
	m := confirmValue.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no confirming form in %s", page)
	}
	return url.Values{"confirm": {m[1]}}
}

// TestADecisionLinkShowsTheItemAndDecidesOnlyWhenConfirmed: an admin gets approve and deny
// links, a member only deny; opening a link shows the command escaped and decides nothing;
// confirming it approves as the admin, named with the account in the audit; the other link
// is then answered "already decided", and no more links are minted.
func TestADecisionLinkShowsTheItemAndDecidesOnlyWhenConfirmed(t *testing.T) {
	env, _ := linksPrimary(t, linkBase)
	askApproval(t, env, "printf '<b>shipped</b>'")
	ctx := context.Background()
	db := env.Primary.Internals().Store

	annLinks, err := mint(env, "approval/1", "ann@example.org")
	if err != nil {
		t.Fatal(err)
	}
	var decisions []threadv1.ItemAction
	for _, l := range annLinks {
		decisions = append(decisions, l.GetDecision())
		if !strings.HasPrefix(l.GetUrl(), linkBase+links.Prefix) || !l.GetExpiresAt().AsTime().Equal(linksStart.Add(24*time.Hour)) {
			t.Errorf("link %v; want one under %s ending at %v", l, linkBase+links.Prefix, linksStart.Add(24*time.Hour))
		}
	}
	if want := []threadv1.ItemAction{threadv1.ItemAction_ITEM_ACTION_APPROVE, threadv1.ItemAction_ITEM_ACTION_DENY}; !equalActions(decisions, want) {
		t.Fatalf("Ann's links %v; want %v", decisions, want)
	}
	benLinks, err := mint(env, "approval/1", "ben@example.org")
	if err != nil || len(benLinks) != 1 || benLinks[0].GetDecision() != threadv1.ItemAction_ITEM_ACTION_DENY {
		t.Fatalf("Ben's links %v, %v; want only deny: a member does not approve a command", benLinks, err)
	}
	if rest := mintOverREST(t, env, "approval/1", "ben@example.org"); len(rest.Links) != 1 || rest.Links[0].Decision != "ITEM_ACTION_DENY" ||
		!strings.HasPrefix(rest.Links[0].URL, linkBase+links.Prefix) || rest.Links[0].ExpiresAt != "2026-03-02T09:00:00Z" {
		t.Errorf("Ben's links over REST %+v; want one deny link ending 2026-03-02T09:00:00Z", rest)
	}
	_, err = mint(env, "approval/1", "eve@example.org")
	if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() !=
		`the email account "eve@example.org" is not linked to anyone here; an admin must link it before it can decide or answer` {
		t.Fatalf("an unlinked account's links: %v; want PermissionDenied saying it is not linked", err)
	}

	approve := linkOf(t, annLinks, threadv1.ItemAction_ITEM_ACTION_APPROVE)
	code, header, page := open(t, env, approve, nil, nil)
	if code != http.StatusOK || !strings.Contains(page, "printf &#39;&lt;b&gt;shipped&lt;/b&gt;&#39;") || strings.Contains(page, "<b>shipped") ||
		!strings.Contains(page, `This link acts as the email account &#34;ann@example.org&#34;.`) {
		t.Fatalf("the approve link's page: %d\n%s\nwant 200 showing the command escaped and whom the link acts as", code, page)
	}
	if csp := header.Get("Content-Security-Policy"); csp != "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'" ||
		header.Get("X-Frame-Options") != "DENY" || header.Get("Cache-Control") != "no-store" || header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the page's headers %v; want the strict ones", header)
	}
	if ap, err := db.Approval(ctx, 1); err != nil || ap.Status != store.ApprovalPending {
		t.Fatalf("after opening the link the approval is %v, %v; want it pending: opening decides nothing", ap.Status, err)
	}

	deny := linkOf(t, annLinks, threadv1.ItemAction_ITEM_ACTION_DENY)
	_, _, denyPage := open(t, env, deny, nil, nil) // its form, confirmed once the item closed

	if code, _, _ := open(t, env, approve, url.Values{}, nil); code != http.StatusBadRequest {
		t.Errorf("a POST without the page's confirmation: %d; want 400", code)
	}
	if code, _, _ := open(t, env, approve, confirmation(t, denyPage), nil); code != http.StatusBadRequest {
		t.Errorf("a POST with another link's confirmation: %d; want 400", code)
	}
	if code, _, _ := open(t, env, approve, confirmation(t, page), map[string]string{"Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
		t.Errorf("a POST another site started: %d; want 403", code)
	}
	code, _, done := open(t, env, approve, confirmation(t, page), nil)
	if code != http.StatusOK || !strings.Contains(done, "Your decision (approve) was taken.") {
		t.Fatalf("confirming the approval: %d\n%s", code, done)
	}
	ap, err := db.Approval(ctx, 1)
	if err != nil || ap.DecidedBy != "ann" || ap.Status == store.ApprovalPending {
		t.Fatalf("approval %+v, %v; want it decided by ann", ap, err)
	}
	audit, err := db.ListAudit(ctx, store.AuditFilter{Subject: store.ApprovalSubject(1), Actor: "ann"})
	if err != nil || len(audit) == 0 || !strings.Contains(string(audit[len(audit)-1].Detail), `"via":{"surface":"email","chat_user_id":"ann@example.org"}`) {
		t.Errorf("audit %+v, %v; want ann's decision via the email account", audit, err)
	}

	already := `approval/1 was already decided (approve) by ann from the email account &#34;ann@example.org&#34;; nothing changed`
	if code, _, page := open(t, env, deny, nil, nil); code != http.StatusConflict || !strings.Contains(page, already) {
		t.Errorf("the deny link afterwards: %d\n%s\nwant 409 %s", code, page, already)
	}
	if code, _, page := open(t, env, deny, confirmation(t, denyPage), nil); code != http.StatusConflict || !strings.Contains(page, already) {
		t.Errorf("confirming the deny link afterwards: %d\n%s\nwant 409 %s", code, page, already)
	}
	if code, _, page := open(t, env, benLinks[0].GetUrl(), nil, nil); code != http.StatusConflict || !strings.Contains(page, already) {
		t.Errorf("Ben's deny link afterwards: %d\n%s\nwant 409 %s", code, page, already)
	}
	if _, err := mint(env, "approval/1", "ann@example.org"); status.Code(err) != codes.Aborted ||
		status.Convert(err).Message() != `approval/1 was already decided (approve) by ann from the email account "ann@example.org"; nothing changed` {
		t.Errorf("minting for a decided item: %v; want ABORTED saying who decided it", err)
	}
}

// equalActions reports whether a and b hold the same actions in the same order.
func equalActions(a, b []threadv1.ItemAction) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestADecisionLinkEndsAtItsExpiry: a link works until the second before its expiry and is
// answered 410 Gone from then on.
func TestADecisionLinkEndsAtItsExpiry(t *testing.T) {
	env, clk := linksPrimary(t, linkBase)
	askApproval(t, env, "printf later")
	ls, err := mint(env, "approval/1", "ben@example.org")
	if err != nil || len(ls) != 1 {
		t.Fatalf("links %v, %v", ls, err)
	}
	clk.Advance(24*time.Hour - time.Second)
	if code, _, page := open(t, env, ls[0].GetUrl(), nil, nil); code != http.StatusOK {
		t.Fatalf("a second before its expiry: %d\n%s\nwant 200", code, page)
	}
	clk.Advance(time.Second)
	code, _, page := open(t, env, ls[0].GetUrl(), nil, nil)
	if code != http.StatusGone || !strings.Contains(page, "This link has expired.") {
		t.Fatalf("at its expiry: %d\n%s\nwant 410 saying it expired", code, page)
	}
}

// TestATamperedDecisionLinkIsNotValid: changing any one character of a link's token, or
// cutting it, makes it a link that is not valid, and the page says nothing more.
func TestATamperedDecisionLinkIsNotValid(t *testing.T) {
	env, _ := linksPrimary(t, linkBase)
	askApproval(t, env, "printf tampered")
	ls, err := mint(env, "approval/1", "ann@example.org")
	if err != nil || len(ls) == 0 {
		t.Fatalf("links %v, %v", ls, err)
	}
	link := ls[0].GetUrl()
	token := strings.TrimPrefix(link, linkBase+links.Prefix)
	variants := []string{token[:len(token)-1], token + "A", ""}
	for i := range token {
		c := byte('A')
		if token[i] == 'A' {
			c = 'B'
		}
		variants = append(variants, token[:i]+string(c)+token[i+1:])
	}
	// The last character holds bits past the signature's end: every other spelling of it is
	// refused too, not read as the same bytes.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for _, c := range alphabet {
		if byte(c) != token[len(token)-1] {
			variants = append(variants, token[:len(token)-1]+string(c))
		}
	}
	for _, v := range variants {
		code, _, page := open(t, env, linkBase+links.Prefix+v, nil, nil)
		if code != http.StatusNotFound || !strings.Contains(page, "<p>This link is not valid.</p>") {
			t.Fatalf("token %q: %d\n%s\nwant 404 not valid", v, code, page)
		}
	}
	if ap, err := env.Primary.Internals().Store.Approval(context.Background(), 1); err != nil || ap.Status != store.ApprovalPending {
		t.Fatalf("approval %v, %v; want it pending", ap.Status, err)
	}
}

// TestDecisionLinksNeedABaseURL: without a public base URL no link is minted, and the
// refusal says what to set.
func TestDecisionLinksNeedABaseURL(t *testing.T) {
	env, _ := linksPrimary(t, "")
	askApproval(t, env, "printf nowhere")
	_, err := mint(env, "approval/1", "ann@example.org")
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() !=
		"decision links are off: set the primary's --decision-link-base (MINDROOM_DECISION_LINK_BASE) to the public https origin of its REST listener" {
		t.Fatalf("minting without a base URL: %v; want FailedPrecondition saying what to set", err)
	}
}
