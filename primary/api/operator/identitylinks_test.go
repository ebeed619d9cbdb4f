package operator_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

func TestIdentityLinks(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)
	adaMatrix := &operatorv1.LinkIdentityRequest{Surface: "matrix", ChatUserId: "@ada:example.org", Person: "ada"}

	t.Run("AMemberMayNeitherLinkNorUnlink", func(t *testing.T) {
		_, err := e.member.LinkIdentity(ctx, adaMatrix)
		wantCode(t, "LinkIdentity by a member", err, codes.PermissionDenied)
		if got, want := status.Convert(err).Message(), `only an admin can link a chat account; operator "mia" is a member`; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
		_, err = e.member.UnlinkIdentity(ctx, &operatorv1.UnlinkIdentityRequest{Surface: "matrix", ChatUserId: "@ada:example.org"})
		wantCode(t, "UnlinkIdentity by a member", err, codes.PermissionDenied)
		if got, want := status.Convert(err).Message(), `only an admin can unlink a chat account; operator "mia" is a member`; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
		if links, _ := e.store.ListIdentityLinks(ctx, store.IdentityLinkFilter{}); len(links) != 0 {
			t.Fatalf("a member's link was stored: %+v", links)
		}
	})

	t.Run("AnAdminLinksAndRelinksAndAMemberListsThem", func(t *testing.T) {
		got, err := e.admin.LinkIdentity(ctx, adaMatrix)
		if err != nil {
			t.Fatal(err)
		}
		l := got.GetLink()
		if got.GetReplaced() || l.GetSurface() != "matrix" || l.GetChatUserId() != "@ada:example.org" || l.GetPerson() != "ada" ||
			l.GetCreatedBy() != "ada" || l.GetCreatedAt() == nil {
			t.Fatalf("link %v", got)
		}
		again, err := e.admin.LinkIdentity(ctx, &operatorv1.LinkIdentityRequest{Surface: "matrix", ChatUserId: "@ada:example.org", Person: "ada-l"})
		if err != nil || !again.GetReplaced() || again.GetLink().GetPerson() != "ada-l" {
			t.Fatalf("relink %v, %v; want replaced", again, err)
		}
		if _, err := e.admin.LinkIdentity(ctx, &operatorv1.LinkIdentityRequest{Surface: "slack", ChatUserId: "U1", Person: "bob"}); err != nil {
			t.Fatal(err)
		}
		list, err := e.member.ListIdentityLinks(ctx, &operatorv1.ListIdentityLinksRequest{Person: "ada-l"})
		if err != nil || len(list.GetLinks()) != 1 || list.GetLinks()[0].GetChatUserId() != "@ada:example.org" || list.GetNextPageToken() != "" {
			t.Fatalf("ada-l's links %v, %v", list, err)
		}
		list, err = e.member.ListIdentityLinks(ctx, &operatorv1.ListIdentityLinksRequest{Surface: "slack"})
		if err != nil || len(list.GetLinks()) != 1 || list.GetLinks()[0].GetPerson() != "bob" {
			t.Fatalf("slack's links %v, %v", list, err)
		}
	})

	t.Run("PagesFollowEachOtherAndATokenIsBoundToItsFilters", func(t *testing.T) {
		first, err := e.member.ListIdentityLinks(ctx, &operatorv1.ListIdentityLinksRequest{PageSize: 1})
		if err != nil || len(first.GetLinks()) != 1 || first.GetNextPageToken() == "" {
			t.Fatalf("first page %v, %v", first, err)
		}
		second, err := e.member.ListIdentityLinks(ctx, &operatorv1.ListIdentityLinksRequest{PageSize: 1, PageToken: first.GetNextPageToken()})
		if err != nil || len(second.GetLinks()) != 1 || second.GetLinks()[0].GetChatUserId() == first.GetLinks()[0].GetChatUserId() {
			t.Fatalf("second page %v, %v", second, err)
		}
		_, err = e.member.ListIdentityLinks(ctx, &operatorv1.ListIdentityLinksRequest{PageSize: 1, PageToken: first.GetNextPageToken(), Surface: "slack"})
		wantCode(t, "a token with other filters", err, codes.InvalidArgument)
		_, err = e.member.ListIdentityLinks(ctx, &operatorv1.ListIdentityLinksRequest{PageSize: 1001})
		wantCode(t, "page_size 1001", err, codes.InvalidArgument)
	})

	t.Run("UnlinkingTwiceIsNotFound", func(t *testing.T) {
		req := &operatorv1.UnlinkIdentityRequest{Surface: "slack", ChatUserId: "U1"}
		if _, err := e.admin.UnlinkIdentity(ctx, req); err != nil {
			t.Fatal(err)
		}
		_, err := e.admin.UnlinkIdentity(ctx, req)
		wantCode(t, "the second unlink", err, codes.NotFound)
		if got, want := status.Convert(err).Message(), `not found: slack account "U1" is not linked`; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
		entries, err := e.store.ListAudit(ctx, store.AuditFilter{Subject: store.IdentitySubject("slack", "U1")})
		if err != nil || len(entries) != 2 || entries[0].Action != store.ActionIdentityUnlink || entries[0].Actor != "ada" ||
			entries[1].Action != store.ActionIdentityLink {
			t.Fatalf("audit %+v, %v; want the link and the unlink by ada", entries, err)
		}
	})

	t.Run("MissingFieldsAreRefusedByName", func(t *testing.T) {
		for _, tc := range []struct {
			req  *operatorv1.LinkIdentityRequest
			want string
		}{
			{&operatorv1.LinkIdentityRequest{ChatUserId: "u", Person: "p"}, "surface is required"},
			{&operatorv1.LinkIdentityRequest{Surface: "s", Person: "p"}, "chat_user_id is required"},
			{&operatorv1.LinkIdentityRequest{Surface: "s", ChatUserId: "u"}, "person is required"},
		} {
			_, err := e.admin.LinkIdentity(ctx, tc.req)
			wantCode(t, tc.want, err, codes.InvalidArgument)
			if got := status.Convert(err).Message(); got != tc.want {
				t.Errorf("message %q, want %q", got, tc.want)
			}
		}
		_, err := e.admin.UnlinkIdentity(ctx, &operatorv1.UnlinkIdentityRequest{Surface: "s"})
		if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "chat_user_id is required" {
			t.Errorf("unlink without an account: %v", err)
		}
	})

	t.Run("RESTLinksListsAndUnlinks", func(t *testing.T) {
		r := e.do(t, http.MethodPost, "/v1/operator/identity-links", e.adminToken,
			`{"surface":"matrix","chat_user_id":"@cy:example.org","person":"cy"}`)
		var linked struct {
			Link     struct{ Person, CreatedBy string } `json:"link"`
			Replaced bool                               `json:"replaced"`
		}
		if err := json.Unmarshal(r.body, &linked); r.code != http.StatusOK || err != nil || linked.Link.Person != "cy" || linked.Replaced {
			t.Fatalf("POST: %d %s", r.code, r.body)
		}
		r = e.do(t, http.MethodGet, "/v1/operator/identity-links?person=cy", e.memberToken, "")
		if r.code != http.StatusOK || !strings.Contains(string(r.body), `"chat_user_id":"@cy:example.org"`) {
			t.Fatalf("GET: %d %s", r.code, r.body)
		}
		r = e.do(t, http.MethodPost, "/v1/operator/identity-links:unlink", e.memberToken, `{"surface":"matrix","chat_user_id":"@cy:example.org"}`)
		if r.code != http.StatusForbidden {
			t.Fatalf("unlink by a member: %d %s", r.code, r.body)
		}
		r = e.do(t, http.MethodPost, "/v1/operator/identity-links:unlink", e.adminToken, `{"surface":"matrix","chat_user_id":"@cy:example.org"}`)
		if r.code != http.StatusOK {
			t.Fatalf("unlink: %d %s", r.code, r.body)
		}
		r = e.do(t, http.MethodPost, "/v1/operator/identity-links:unlink", e.adminToken, `{"surface":"matrix","chat_user_id":"@cy:example.org"}`)
		if r.code != http.StatusNotFound {
			t.Fatalf("unlink again: %d %s", r.code, r.body)
		}
	})
}

// TestIdentityLinkFieldsAreCheckedByTheirRules drives the whole primary, whose request
// interceptor applies fieldrule to every field by its name: each field's longest value passes
// and one byte more is refused with the rule's words.
func TestIdentityLinkFieldsAreCheckedByTheirRules(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	admin := operatorv1.NewOperatorServiceClient(dial(t, env, adminToken(t, env)))
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	for _, tc := range []struct {
		name string
		req  *operatorv1.LinkIdentityRequest
		want string // the refusal; "" when the link is made
	}{
		{"Surface32", &operatorv1.LinkIdentityRequest{Surface: long("s", 32), ChatUserId: "u", Person: "p"}, ""},
		{"Surface33", &operatorv1.LinkIdentityRequest{Surface: long("s", 33), ChatUserId: "u", Person: "p"},
			"surface must be 1..32 of a-z, 0-9, '_' or '-'"},
		{"SurfaceUppercase", &operatorv1.LinkIdentityRequest{Surface: "Slack", ChatUserId: "u", Person: "p"},
			"surface must be 1..32 of a-z, 0-9, '_' or '-'"},
		{"ChatUserID255", &operatorv1.LinkIdentityRequest{Surface: "slack", ChatUserId: long("u", 255), Person: "p"}, ""},
		{"ChatUserID256", &operatorv1.LinkIdentityRequest{Surface: "slack", ChatUserId: long("u", 256), Person: "p"},
			"chat_user_id must be 1..255 bytes of UTF-8 without control characters"},
		{"Person64", &operatorv1.LinkIdentityRequest{Surface: "slack", ChatUserId: "p64", Person: long("p", 64)}, ""},
		{"Person65", &operatorv1.LinkIdentityRequest{Surface: "slack", ChatUserId: "p65", Person: long("p", 65)},
			"person must be 1..64 letters, digits and . _ : @ = + -, starting with a letter, digit or @"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := admin.LinkIdentity(ctx, tc.req)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != tc.want {
				t.Fatalf("%v, want INVALID_ARGUMENT %q", err, tc.want)
			}
		})
	}
	_, err := admin.ListIdentityLinks(ctx, &operatorv1.ListIdentityLinksRequest{Surface: "Slack"})
	if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "surface must be 1..32 of a-z, 0-9, '_' or '-'" {
		t.Fatalf("a list filtered by an invalid surface: %v", err)
	}
}
