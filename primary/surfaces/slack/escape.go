package slack

import (
	"strings"
	"unicode/utf8"
)

// Slack mrkdwn reads "<…>" as a mention, a special mention such as <!channel> or a link, and
// "&" starts an entity. Escaping these three (and only these, as Slack asks) makes any untrusted
// text read literally: no mention, no @channel, no disguised link. Posts never set link_names,
// so a bare "@channel" stays text.

// escapeRune returns how one rune of untrusted text is written in mrkdwn. In a code block a
// backtick is followed by a zero-width space, so untrusted text cannot close the block early.
func escapeRune(r rune, inCode bool) string {
	switch r {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '`':
		if inCode {
			return "`\u200b"
		}
	}
	return string(r)
}

// escapeText escapes untrusted text for mrkdwn.
func escapeText(s string) string {
	out, _ := fitEscaped(s, -1, false)
	return out
}

// fitEscaped escapes untrusted text and cuts it at a rune boundary so that the escaped text is at
// most limit characters; a negative limit means no limit. It reports whether it cut. An escape
// sequence is never split.
func fitEscaped(s string, limit int, inCode bool) (string, bool) {
	var b strings.Builder
	n := 0
	for i, r := range s {
		e := escapeRune(r, inCode)
		w := utf8.RuneCountInString(e)
		if limit >= 0 && n+w > limit {
			return b.String(), i < len(s)
		}
		b.WriteString(e)
		n += w
	}
	return b.String(), false
}

// mention renders a Slack user id as a mention, or returns false when it does not look like one,
// so that only real ids (never untrusted names) become mentions.
func mention(userID string) (string, bool) {
	if len(userID) < 3 || (userID[0] != 'U' && userID[0] != 'W') {
		return "", false
	}
	for _, r := range userID[1:] {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return "", false
		}
	}
	return "<@" + userID + ">", true
}

// runes counts characters as Slack counts them.
func runes(s string) int { return utf8.RuneCountInString(s) }
