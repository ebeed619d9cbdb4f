package dashboard_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

var auditRow = regexp.MustCompile(`(?s)<tr><td>[^<]*</td><td>admin</td><td>conversation_mode.set</td>(<td[^>]*>[^<]*</td>)`)

// TestAuditSubjectsReadDecodedAndStayInert: a subject reads decoded but for a slash inside a
// segment, which would make a thread "$thread/1" read like a deeper path.
func TestAuditSubjectsReadDecodedAndStayInert(t *testing.T) {
	env := testenv.Start(t)
	b := signIn(t, env, adminToken(t, env))
	channel, thread := "!r<b>oom:example.org", "$thread/1 & 2"
	if _, err := env.Primary.Internals().Store.SetConversationMode(context.Background(), channel, thread, store.ModeAuto, "admin"); err != nil {
		t.Fatal(err)
	}
	raw := store.ConversationSubject(channel, thread)
	_, page := b.get("/ui/conversations")
	m := auditRow.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no audit row for the mode change:\n%s", page)
	}
	want := `<td title="` + strings.ReplaceAll(raw, "&", "&amp;") + `">conversation/!r&lt;b&gt;oom:example.org/$thread%2F1 &amp; 2</td>`
	if m[1] != want {
		t.Errorf("subject cell\n%s\nwant\n%s", m[1], want)
	}
}

func TestTheConversationsPageListsTheConversations(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	if _, err := env.Primary.Internals().Store.SetConversationMode(ctx, "!moded<i>", "$t", store.ModeAuto, "admin"); err != nil {
		t.Fatal(err)
	}
	pendingApproval(t, env) // in !room / $t
	env.Open(t)             // a live response in !room:example.org / $thread
	b := signIn(t, env, adminToken(t, env))
	_, page := b.get("/ui/conversations?channel=%21room&thread=%24t")
	list := regexp.MustCompile(`(?s)<section class="card" id="conversation-list">.*?</section>`).FindString(page)
	rows := regexp.MustCompile(`(?s)<tr class="conversation[^"]*">.*?</tr>`).FindAllString(list, -1)
	want := []string{
		// Most recently active first: the approval, then the mode; the live response's
		// conversation has no record, so it follows.
		`<tr class="conversation selected"><td><a href="/ui/conversations?channel=%21room&amp;thread=%24t">!room</a></td><td>$t</td>
    <td>ask</td>`,
		`<tr class="conversation"><td><a href="/ui/conversations?channel=%21moded%3Ci%3E&amp;thread=%24t">!moded&lt;i&gt;</a></td><td>$t</td>
    <td>auto</td>`,
		`<tr class="conversation"><td><a href="/ui/conversations?channel=%21room%3Aexample.org&amp;thread=%24thread">!room:example.org</a></td><td>$thread</td>
    <td>ask</td><td></td><td><span class="status s-running">live response</span></td></tr>`,
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(rows), len(want), list)
	}
	for i, w := range want {
		if !strings.HasPrefix(rows[i], w) {
			t.Errorf("row %d:\n%s\nwant it to open with\n%s", i, rows[i], w)
		}
	}
}

// An agent's shell mode says where it applies: a minimal mode checked for a worker key holds
// for that worker key's shells only.
func TestTheShellModeSaysWhereItApplies(t *testing.T) {
	env := testenv.Start(t)
	if _, err := env.Primary.Internals().Store.SetShellMode(context.Background(), "!room", "$t", "code", store.ShellModeMinimal, "gpu<1>", "admin"); err != nil {
		t.Fatal(err)
	}
	b := signIn(t, env, adminToken(t, env))
	_, page := b.get("/ui/conversations?channel=%21room&thread=%24t&agent=code")
	got := regexp.MustCompile(`<dd id="shell-mode">.*?</dd>`).FindString(page)
	if !strings.HasPrefix(got, `<dd id="shell-mode">minimal <span class="meta">on worker key gpu&lt;1&gt;, set by admin `) {
		t.Errorf("shell mode %q: want minimal on worker key gpu<1>, escaped, set by admin", got)
	}
}
