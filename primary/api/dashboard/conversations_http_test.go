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

func TestAuditSubjectsReadDecodedAndStayInert(t *testing.T) {
	env := testenv.Start(t)
	b := signIn(t, env, adminToken(t, env))
	channel, thread := "!r<b>oom:example.org", "$thread/1 & 2"
	if _, err := env.Primary.Store.SetConversationMode(context.Background(), channel, thread, store.ModeAuto, "admin"); err != nil {
		t.Fatal(err)
	}
	raw := store.ConversationSubject(channel, thread)
	_, page := b.get("/ui/conversations")
	m := auditRow.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no audit row for the mode change:\n%s", page)
	}
	want := `<td title="` + strings.ReplaceAll(raw, "&", "&amp;") + `">conversation/!r&lt;b&gt;oom:example.org/$thread/1 &amp; 2</td>`
	if m[1] != want {
		t.Errorf("subject cell\n%s\nwant\n%s", m[1], want)
	}
}
