package drivertest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

func (cf conformance) testIdentityLinks(t *testing.T) {
	ctx := context.Background()
	ada := store.NewIdentityLink{Surface: "matrix", ChatUserID: "@ada:example.org", Person: "ada"}

	auditDetail := func(t *testing.T, s store.Store, action string) []map[string]string {
		t.Helper()
		entries, err := s.ListAudit(ctx, store.AuditFilter{Action: action, Subject: store.IdentitySubject(ada.Surface, ada.ChatUserID)})
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]string
		for _, e := range entries {
			var d map[string]string
			if err := json.Unmarshal(e.Detail, &d); err != nil {
				t.Fatal(err)
			}
			if e.Actor != "root" || !e.At.Equal(t0) {
				t.Errorf("audit entry %+v, want actor root at %v", e, t0)
			}
			out = append(out, d)
		}
		return out
	}

	t.Run("RemovingAnOperatorRemovesItsLinks", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		if _, err := s.CreateOperator(ctx, store.NewOperator{Name: "ada", Role: store.RoleAdmin, Digest: sha256.Sum256([]byte("ada"))}); err != nil {
			t.Fatal(err)
		}
		bob := store.NewIdentityLink{Surface: "slack", ChatUserID: "U0BOB", Person: "bob"}
		adaSlack := store.NewIdentityLink{Surface: "slack", ChatUserID: "U0ADA", Person: "ada"}
		for _, l := range []store.NewIdentityLink{ada, adaSlack, bob} {
			if _, _, err := s.LinkIdentity(ctx, l, "root"); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RemoveOperator(ctx, "ada"); err != nil {
			t.Fatal(err)
		}
		// A new operator given the name inherits nothing.
		if _, err := s.CreateOperator(ctx, store.NewOperator{Name: "ada", Role: store.RoleMember, Digest: sha256.Sum256([]byte("ada again"))}); err != nil {
			t.Fatal(err)
		}
		for _, l := range []store.NewIdentityLink{ada, adaSlack} {
			if _, err := s.IdentityLink(ctx, l.Surface, l.ChatUserID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s %s after its operator was removed: %v, want ErrNotFound", l.Surface, l.ChatUserID, err)
			}
		}
		if got, err := s.IdentityLink(ctx, bob.Surface, bob.ChatUserID); err != nil || got.Person != "bob" {
			t.Errorf("another person's link: %+v, %v; want it kept", got, err)
		}
		entries, err := s.ListAudit(ctx, store.AuditFilter{Action: store.ActionIdentityUnlink, Subject: store.IdentitySubject(ada.Surface, ada.ChatUserID)})
		if err != nil || len(entries) != 1 || entries[0].Actor != "primary" ||
			string(entries[0].Detail) != `{"chat_user_id":"@ada:example.org","person":"ada","reason":"operator removed","surface":"matrix"}` {
			t.Errorf("unlink audit %+v, %v; want one entry by the primary with the reason", entries, err)
		}
	})
	t.Run("ALinkIsReadBackAndReplacingItIsReportedAndAudited", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		link, replaced, err := s.LinkIdentity(ctx, ada, "root")
		want := store.IdentityLink{Surface: "matrix", ChatUserID: "@ada:example.org", Person: "ada", CreatedBy: "root", CreatedAt: t0}
		if err != nil || replaced || link != want {
			t.Fatalf("link %+v replaced %v, %v; want %+v, not replaced", link, replaced, err, want)
		}
		if got, err := s.IdentityLink(ctx, "matrix", "@ada:example.org"); err != nil || got != want {
			t.Fatalf("read back %+v, %v", got, err)
		}
		again := ada
		again.Person = "ada-lovelace"
		if link, replaced, err = s.LinkIdentity(ctx, again, "root"); err != nil || !replaced || link.Person != "ada-lovelace" {
			t.Fatalf("relinking: %+v replaced %v, %v; want replaced", link, replaced, err)
		}
		if got, err := s.IdentityLink(ctx, "matrix", "@ada:example.org"); err != nil || got.Person != "ada-lovelace" {
			t.Fatalf("after relinking %+v, %v", got, err)
		}
		// The same account id on another surface is another account.
		if _, err := s.IdentityLink(ctx, "slack", "@ada:example.org"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another surface: %v, want ErrNotFound", err)
		}
		got := auditDetail(t, s, store.ActionIdentityLink)
		wantDetail := []map[string]string{
			{"surface": "matrix", "chat_user_id": "@ada:example.org", "person": "ada-lovelace", "previous": "ada"},
			{"surface": "matrix", "chat_user_id": "@ada:example.org", "person": "ada", "previous": ""},
		}
		if !reflect.DeepEqual(got, wantDetail) {
			t.Fatalf("audit details %v, want %v", got, wantDetail)
		}
	})

	t.Run("UnlinkingRemovesTheLinkOnceAndIsAudited", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		if _, _, err := s.LinkIdentity(ctx, ada, "root"); err != nil {
			t.Fatal(err)
		}
		if err := s.UnlinkIdentity(ctx, "matrix", "@ada:example.org", "root"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.IdentityLink(ctx, "matrix", "@ada:example.org"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an unlinked account: %v, want ErrNotFound", err)
		}
		err := s.UnlinkIdentity(ctx, "matrix", "@ada:example.org", "root")
		if !errors.Is(err, store.ErrNotFound) || err.Error() != `not found: matrix account "@ada:example.org" is not linked` {
			t.Fatalf("unlinking twice: %v, want ErrNotFound naming the account", err)
		}
		got := auditDetail(t, s, store.ActionIdentityUnlink)
		if want := []map[string]string{{"surface": "matrix", "chat_user_id": "@ada:example.org", "person": "ada"}}; !reflect.DeepEqual(got, want) {
			t.Fatalf("audit details %v, want %v", got, want)
		}
	})

	t.Run("AFailedAuditWriteLeavesTheAccountAsItWas", func(t *testing.T) {
		s, failAudit := cf.openFaulty(t, nil, &clock{t: t0})
		if _, _, err := s.LinkIdentity(ctx, ada, "root"); err != nil {
			t.Fatal(err)
		}
		failAudit.Store(true)
		other := ada
		other.Person = "mallory"
		if _, _, err := s.LinkIdentity(ctx, other, "root"); !errors.Is(err, errInjected) {
			t.Fatalf("relink: %v, want the injected failure", err)
		}
		if err := s.UnlinkIdentity(ctx, ada.Surface, ada.ChatUserID, "root"); !errors.Is(err, errInjected) {
			t.Fatalf("unlink: %v, want the injected failure", err)
		}
		if got, err := s.IdentityLink(ctx, ada.Surface, ada.ChatUserID); err != nil || got.Person != "ada" {
			t.Fatalf("link %+v, %v; want still ada", got, err)
		}
	})

	t.Run("FieldsAreCheckedAtTheirLimits", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		for _, tc := range []struct {
			name  string
			link  store.NewIdentityLink
			valid bool
		}{
			{"Surface32", newLink(strings.Repeat("s", 32), "u", "ada"), true},
			{"Surface33", newLink(strings.Repeat("s", 33), "u", "ada"), false},
			{"SurfaceWithDigitsDashAndUnderscore", newLink("chat_2-x", "u", "ada"), true},
			{"SurfaceEmpty", newLink("", "u", "ada"), false},
			{"SurfaceUppercase", newLink("Matrix", "u", "ada"), false},
			{"SurfaceWithColon", newLink("runtime:a", "u", "ada"), false},
			{"ChatUserID255", newLink("slack", strings.Repeat("u", 255), "ada"), true},
			{"ChatUserID256", newLink("slack", strings.Repeat("u", 256), "ada"), false},
			{"ChatUserIDOfMultibyteCharactersCountsBytes", newLink("slack", strings.Repeat("é", 128), "ada"), false},
			{"ChatUserIDEmpty", newLink("slack", "", "ada"), false},
			{"ChatUserIDWithNewline", newLink("slack", "u\n1", "ada"), false},
			{"ChatUserIDInvalidUTF8", newLink("slack", "u\xff", "ada"), false},
			{"Person64", newLink("slack", "p64", "@"+strings.Repeat("p", 63)), true},
			{"Person65", newLink("slack", "p65", "@"+strings.Repeat("p", 64)), false},
			{"PersonAMatrixID", newLink("slack", "pm", "@ada:example.org"), true},
			{"PersonEmpty", newLink("slack", "pe", ""), false},
			{"PersonWithSpace", newLink("slack", "ps", "ada lovelace"), false},
			{"PersonStartingWithDot", newLink("slack", "pd", ".ada"), false},
		} {
			_, _, err := s.LinkIdentity(ctx, tc.link, "root")
			if tc.valid && err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			if !tc.valid && !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
			}
		}
		if _, _, err := s.LinkIdentity(ctx, ada, ""); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("no actor: %v, want ErrInvalid", err)
		}
		if err := s.UnlinkIdentity(ctx, "Matrix", "u", "root"); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("unlink of an invalid surface: %v, want ErrInvalid", err)
		}
		if _, err := s.IdentityLink(ctx, "slack", strings.Repeat("u", 256)); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("read of an invalid chat user id: %v, want ErrInvalid", err)
		}
		for _, f := range []store.IdentityLinkFilter{{Limit: -1}, {Limit: 1001}, {After: store.IdentityLinkPosition{CreatedAt: t0}}} {
			if _, err := s.ListIdentityLinks(ctx, f); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("list %+v: %v, want ErrInvalid", f, err)
			}
		}
	})

	t.Run("ListsFilterBySurfaceAndPersonAndPageNewestFirst", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		links := []store.NewIdentityLink{
			newLink("matrix", "@ada:example.org", "ada"),
			newLink("slack", "U1", "ada"),
			newLink("matrix", "@bob:example.org", "bob"),
			newLink("slack", "U2", "bob"),
		}
		for i, l := range links {
			clk.Set(t0.Add(time.Duration(i/2) * time.Second)) // two links share each time
			if _, _, err := s.LinkIdentity(ctx, l, "root"); err != nil {
				t.Fatal(err)
			}
		}
		keys := func(ls []store.IdentityLink) []string {
			var out []string
			for _, l := range ls {
				out = append(out, l.Surface+"/"+l.ChatUserID)
			}
			return out
		}
		for _, tc := range []struct {
			name string
			f    store.IdentityLinkFilter
			want []string
		}{
			{"All", store.IdentityLinkFilter{}, []string{"matrix/@bob:example.org", "slack/U2", "matrix/@ada:example.org", "slack/U1"}},
			{"Surface", store.IdentityLinkFilter{Surface: "slack"}, []string{"slack/U2", "slack/U1"}},
			{"Person", store.IdentityLinkFilter{Person: "ada"}, []string{"matrix/@ada:example.org", "slack/U1"}},
			{"Both", store.IdentityLinkFilter{Surface: "matrix", Person: "bob"}, []string{"matrix/@bob:example.org"}},
			{"None", store.IdentityLinkFilter{Person: "carol"}, nil},
		} {
			got, err := s.ListIdentityLinks(ctx, tc.f)
			if err != nil || !reflect.DeepEqual(keys(got), tc.want) {
				t.Errorf("%s: %v, %v; want %v", tc.name, keys(got), err, tc.want)
			}
		}
		// Paging one at a time visits every link once, in order, across equal times.
		var paged []string
		var after store.IdentityLinkPosition
		for range 10 {
			page, err := s.ListIdentityLinks(ctx, store.IdentityLinkFilter{After: after, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			paged = append(paged, keys(page)...)
			l := page[0]
			after = store.IdentityLinkPosition{CreatedAt: l.CreatedAt, Surface: l.Surface, ChatUserID: l.ChatUserID}
		}
		if want := []string{"matrix/@bob:example.org", "slack/U2", "matrix/@ada:example.org", "slack/U1"}; !reflect.DeepEqual(paged, want) {
			t.Fatalf("paged %v, want %v", paged, want)
		}
		// Linking an account again moves it to the front.
		clk.Set(t0.Add(time.Minute))
		if _, _, err := s.LinkIdentity(ctx, links[1], "root"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ListIdentityLinks(ctx, store.IdentityLinkFilter{Limit: 1}); err != nil || keys(got)[0] != "slack/U1" {
			t.Fatalf("first after relinking: %v, %v", keys(got), err)
		}
	})
}

func newLink(surface, chatUserID, person string) store.NewIdentityLink {
	return store.NewIdentityLink{Surface: surface, ChatUserID: chatUserID, Person: person}
}
