package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

func TestLinksCommands(t *testing.T) {
	r := newRig(t)

	t.Run("AddListsAndReplaces", func(t *testing.T) {
		out := r.ok(t, "links", "add", "matrix", "@ada:example.org", "ada")
		for _, want := range []string{`surface:\s+matrix`, `chat user:\s+@ada:example\.org`, `person:\s+ada\n`, `linked by:\s+admin`, `replaced a link:\s+no`} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Fatalf("links add: %q lacks %s", out, want)
			}
		}
		if out := r.ok(t, "link", "add", "matrix", "@ada:example.org", "ada-l"); !regexp.MustCompile(`replaced a link:\s+yes`).MatchString(out) {
			t.Fatalf("links add again: %q", out)
		}
		r.ok(t, "links", "add", "slack", "U024BE7LH", "bob")
		out = r.ok(t, "links")
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 ||
			!regexp.MustCompile(`^SURFACE\s+CHAT USER\s+PERSON\s+LINKED BY\s+LINKED$`).MatchString(lines[0]) ||
			!regexp.MustCompile(`^slack\s+U024BE7LH\s+bob\s+admin\s`).MatchString(lines[1]) ||
			!regexp.MustCompile(`^matrix\s+@ada:example\.org\s+ada-l\s+admin\s`).MatchString(lines[2]) {
			t.Fatalf("links ls:\n%s", out)
		}
		got := jsonLines(t, r.ok(t, "links", "ls", "--person", "ada-l", "--json"))
		if len(got) != 1 || got[0]["chat_user_id"] != "@ada:example.org" || got[0]["surface"] != "matrix" {
			t.Fatalf("links ls --person ada-l --json: %v", got)
		}
		if got := jsonLines(t, r.ok(t, "links", "ls", "--surface", "slack", "--json")); len(got) != 1 || got[0]["person"] != "bob" {
			t.Fatalf("links ls --surface slack --json: %v", got)
		}
	})

	t.Run("RemoveUnlinksOnce", func(t *testing.T) {
		if out := r.ok(t, "links", "rm", "slack", "U024BE7LH"); out != "slack account U024BE7LH unlinked\n" {
			t.Fatalf("links rm: %q", out)
		}
		res := r.cli(t, "links", "rm", "slack", "U024BE7LH")
		if want := "turncli links rm: not found: slack account \"U024BE7LH\" is not linked (NotFound)\n"; res.code != 1 || res.stderr != want {
			t.Fatalf("links rm again: exit %d, %q", res.code, res.stderr)
		}
	})

	t.Run("AMemberListsButMayNotLink", func(t *testing.T) {
		file := operatorFile(t, r.env, "mia", store.RoleMember)
		res := r.cli(t, "links", "add", "slack", "U1", "mia", "--token-file", file)
		if want := "turncli links add: only an admin can link a chat account; operator \"mia\" is a member (PermissionDenied)\n"; res.code != 1 || res.stderr != want {
			t.Fatalf("a member links: exit %d, %q", res.code, res.stderr)
		}
		if out := r.ok(t, "links", "ls", "--token-file", file); !strings.Contains(out, "@ada:example.org") {
			t.Fatalf("a member's links ls: %q", out)
		}
	})

	t.Run("UsageAndRefusedFields", func(t *testing.T) {
		if res := r.cli(t, "links", "add", "matrix", "@ada:example.org"); res.code != 2 || !strings.HasPrefix(res.stderr, "turncli links add: links add takes SURFACE CHAT_USER_ID PERSON\n") {
			t.Fatalf("links add with two arguments: exit %d, %q", res.code, res.stderr)
		}
		res := r.cli(t, "links", "add", "Matrix", "@ada:example.org", "ada")
		if want := "turncli links add: surface must be 1..32 of a-z, 0-9, '_' or '-' (InvalidArgument)\n"; res.code != 1 || res.stderr != want {
			t.Fatalf("an uppercase surface: exit %d, %q", res.code, res.stderr)
		}
	})
}
