package matrix

import (
	"html"
	"slices"
	"strings"
	"time"
)

// rendering is a card's text twice over: plain for body, HTML for formatted_body.
type rendering struct {
	plain, html []string
}

func (r *rendering) add(plain, html string) {
	r.plain = append(r.plain, plain)
	r.html = append(r.html, html)
}

func (r rendering) body() string          { return strings.Join(r.plain, "\n") }
func (r rendering) formattedBody() string { return strings.Join(r.html, "") }

// escape makes untrusted text inert HTML and keeps its line breaks.
func escape(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "\n", "<br>")
}

// renderCard is the card as people read it: the title, the lines, the decided text in a code
// block, and either how to answer it (open) or how it ended (closed, when c is not nil).
// Every piece of the card's text is escaped; the markup around it is the only HTML.
func renderCard(card Card, c *Closing) rendering {
	var r rendering
	r.add(card.Title, "<p><strong>"+escape(card.Title)+"</strong></p>")
	for _, line := range card.Lines {
		r.add(line, "<p>"+escape(line)+"</p>")
	}
	if card.Text != "" {
		// A code block keeps the text as it is; pre keeps its own line breaks.
		r.add(card.Text, "<pre><code>"+html.EscapeString(card.Text)+"</code></pre>")
		if card.TextTruncated {
			r.add(truncatedNote, "<p><em>"+truncatedNote+"</em></p>")
		}
	}
	if c != nil {
		line := closingLine(*c)
		r.add(line, "<p><strong>"+escape(line)+"</strong></p>")
		if c.Note != "" {
			r.add("Note: "+c.Note, "<p>Note: "+escape(c.Note)+"</p>")
		}
		return r
	}
	if hint := answerHint(card.Actions); hint != "" {
		r.add(hint, "<p><em>"+html.EscapeString(hint)+"</em></p>")
	}
	return r
}

// truncatedNote tells people the card shows only part of what they would decide on.
const truncatedNote = "Shown shortened; read it in full on the dashboard before deciding."

// closingLine says how, by whom and when an item ended: "Approved by @b:example at
// 2026-12-05 16:50 UTC".
func closingLine(c Closing) string {
	line := howLabel[c.How]
	if line == "" {
		line = "Closed"
	}
	if c.By != "" {
		line += " by " + c.By
	}
	if !c.At.IsZero() {
		line += " at " + c.At.UTC().Format("2006-01-02 15:04 UTC")
	}
	return line
}

var howLabel = map[How]string{
	HowApproved:  "Approved",
	HowDenied:    "Denied",
	HowAnswered:  "Answered",
	HowExpired:   "Expired",
	HowCancelled: "Cancelled",
	HowFinished:  "Finished",
}

// answerHint tells people which gestures answer a card with these actions, in the words the
// Listener reads them by; empty when the card takes no answer.
func answerHint(actions []Decision) string {
	var parts []string
	has := func(d Decision) bool { return slices.Contains(actions, d) }
	switch {
	case has(DecisionApprove) && has(DecisionDeny):
		parts = append(parts, "React ✅ to approve or ❌ to deny")
	case has(DecisionAllowOnce) && has(DecisionDeny):
		parts = append(parts, "React ✅ to allow once or ❌ to deny")
	case has(DecisionDeny):
		parts = append(parts, "React ❌ to deny")
	}
	switch {
	case has(DecisionAnswer):
		parts = append(parts, "Reply to this message to answer")
	case has(DecisionComment):
		parts = append(parts, "reply to this message to request changes")
	case has(DecisionDeny):
		parts = append(parts, "reply to this message to deny with a reason")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}

// mindRoomTime is a time as MindRoom writes it: ISO 8601 with an offset, in UTC.
func mindRoomTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05-07:00")
}
