package matrix

import (
	"testing"
	"time"
)

func TestRenderCard(t *testing.T) {
	card := Card{
		Key: "approval/7", Kind: KindCommandApproval,
		Title:   `Run <b>this</b>?`,
		Lines:   []string{"Requested by <img src=x onerror=alert(1)>", "two\nlines & more"},
		Text:    "echo '<script>' && rm -rf \"$HOME\"",
		Actions: []Decision{DecisionApprove, DecisionDeny, DecisionComment},
	}
	t.Run("UntrustedTextIsEscapedInTheFormattedBody", func(t *testing.T) {
		r := renderCard(card, nil)
		want := `<p><strong>Run &lt;b&gt;this&lt;/b&gt;?</strong></p>` +
			`<p>Requested by &lt;img src=x onerror=alert(1)&gt;</p>` +
			`<p>two<br>lines &amp; more</p>` +
			`<pre><code>echo &#39;&lt;script&gt;&#39; &amp;&amp; rm -rf &#34;$HOME&#34;</code></pre>` +
			`<p><em>React ✅ to approve or ❌ to deny; reply to this message to request changes.</em></p>`
		if got := r.formattedBody(); got != want {
			t.Fatalf("formatted body:\n got %s\nwant %s", got, want)
		}
		wantBody := "Run <b>this</b>?\nRequested by <img src=x onerror=alert(1)>\ntwo\nlines & more\n" +
			"echo '<script>' && rm -rf \"$HOME\"\nReact ✅ to approve or ❌ to deny; reply to this message to request changes."
		if got := r.body(); got != wantBody {
			t.Fatalf("body:\n got %q\nwant %q", got, wantBody)
		}
	})
	t.Run("AClosedCardSaysWhoHowAndWhenAndOffersNothing", func(t *testing.T) {
		truncated := card
		truncated.TextTruncated = true
		r := renderCard(truncated, &Closing{How: HowDenied, By: "@b:localhost", At: time.Date(2026, 12, 5, 16, 50, 30, 0, time.UTC), Note: "not <now>"})
		want := `<p><strong>Run &lt;b&gt;this&lt;/b&gt;?</strong></p>` +
			`<p>Requested by &lt;img src=x onerror=alert(1)&gt;</p>` +
			`<p>two<br>lines &amp; more</p>` +
			`<pre><code>echo &#39;&lt;script&gt;&#39; &amp;&amp; rm -rf &#34;$HOME&#34;</code></pre>` +
			`<p><em>Shown shortened; read it in full on the dashboard before deciding.</em></p>` +
			`<p><strong>Denied by @b:localhost at 2026-12-05 16:50 UTC</strong></p>` +
			`<p>Note: not &lt;now&gt;</p>`
		if got := r.formattedBody(); got != want {
			t.Fatalf("formatted body:\n got %s\nwant %s", got, want)
		}
	})
}

func TestAnswerHint(t *testing.T) {
	for _, tc := range []struct {
		name    string
		actions []Decision
		want    string
	}{
		{"ApprovalWithComment", []Decision{DecisionApprove, DecisionDeny, DecisionComment}, "React ✅ to approve or ❌ to deny; reply to this message to request changes."},
		{"ApprovalWithoutComment", []Decision{DecisionApprove, DecisionDeny}, "React ✅ to approve or ❌ to deny; reply to this message to deny with a reason."},
		{"PermissionPrompt", []Decision{DecisionAllowOnce, DecisionAllowThread, DecisionAllowConversation, DecisionDeny}, "React ✅ to allow once or ❌ to deny; reply to this message to deny with a reason."},
		{"QuestionForm", []Decision{DecisionAnswer}, "Reply to this message to answer."},
		{"Snapshot", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := answerHint(tc.actions); got != tc.want {
				t.Fatalf("answerHint = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTxnID(t *testing.T) {
	a := TxnID("approval/7", "card", 1)
	if a != TxnID("approval/7", "card", 1) {
		t.Fatal("the same send gave two transaction ids")
	}
	if len(a) != len("turncli.")+32 {
		t.Fatalf("TxnID = %q, want turncli. and 32 hex digits", a)
	}
	for _, other := range []string{
		TxnID("approval/7", "close", 1), TxnID("approval/7", "card", 2), TxnID("approval/8", "card", 1),
		TxnID("approval/7c", "ard", 1), // the parts are length-prefixed, not just joined
	} {
		if other == a {
			t.Fatalf("a different send has the transaction id %s", a)
		}
	}
}
