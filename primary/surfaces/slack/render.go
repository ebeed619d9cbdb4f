package slack

import (
	"cmp"
	"fmt"
	"strings"

	goslack "github.com/slack-go/slack"

	"github.com/turncli/turncli/primary/threadfeed"
)

// rendered is a card as Slack blocks, its notification text and whether any text was cut.
type rendered struct {
	blocks    []goslack.Block
	fallback  string
	truncated bool
}

// truncatedNotice is the context line of a card whose preview is incomplete.
const truncatedNotice = "Preview truncated: the full text is in turncli."

// markerRoom is what a section keeps free so a cut text can always end with the marker.
var markerRoom = runes(truncatedMarker) + 1

// render builds a card's message: its title, body, decidable text and questions, then either
// its buttons or, once closed, the closing line. It depends only on its arguments, so closing a
// card twice renders the same message. The decidable text and the questions get the text budget
// first, the body what is left.
func render(c Card, closing *Closing) rendered {
	var r rendered
	title, cut := fitEscaped(c.Title, maxTitle, false)
	if cut {
		title += " " + truncatedMarker
		r.truncated = true
	}
	budget := maxCardText - runes(title)

	var decidable string
	if c.Decidable != "" {
		code, cut := fitEscaped(c.Decidable, maxSectionText-6-markerRoom, true)
		decidable = "```" + code + "```"
		if cut {
			decidable += "\n" + truncatedMarker
			r.truncated = true
		}
		budget -= runes(decidable)
	}

	var questions []string
	if c.Form != nil {
		questions = renderQuestions(*c.Form)
		for _, q := range questions {
			budget -= runes(q)
		}
	}

	fixed := 3 + len(questions) // title, the truncation notice, buttons or closing line
	if decidable != "" {
		fixed++
	}
	body, cut := packLines(c.Body, budget, maxBlocks-fixed)
	r.truncated = r.truncated || cut || c.PreviewTruncated

	r.blocks = append(r.blocks, section("*"+title+"*"))
	for _, b := range body {
		r.blocks = append(r.blocks, section(b))
	}
	if decidable != "" {
		r.blocks = append(r.blocks, section(decidable))
	}
	for _, q := range questions {
		r.blocks = append(r.blocks, section(q))
	}
	if r.truncated {
		r.blocks = append(r.blocks, goslack.NewContextBlock("turncli.truncated", mrkdwn(truncatedNotice)))
	}
	plainTitle, _ := fitEscaped(c.Title, maxFallback, false)
	if closing != nil {
		r.blocks = append(r.blocks, goslack.NewContextBlock("turncli.closing", mrkdwn(closingLine(*closing))))
		r.fallback = outcomeWords(closing.How) + ": " + plainTitle
		return r
	}
	if buttons := renderButtons(c, r.truncated); buttons != nil {
		r.blocks = append(r.blocks, buttons)
	}
	r.fallback = kindLeads[c.Kind] + ": " + plainTitle
	return r
}

// kindLeads open the notification text of an open card.
var kindLeads = map[Kind]string{
	KindApproval:     "Approval needed",
	KindPlanApproval: "Plan approval needed",
	KindPermission:   "Permission needed",
	KindCLICall:      "Call approval needed",
	KindQuestion:     "Questions for you",
	KindPlan:         "Plan",
	KindReport:       "Report",
}

// packLines escapes untrusted lines into as few sections as fit, within the text budget and the
// number of sections left; a line longer than a section is cut. It reports whether anything was
// cut or left out, and then the last section ends with the marker.
func packLines(lines []string, budget, sections int) ([]string, bool) {
	var out []string
	var cur strings.Builder
	cut := false
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, line := range lines {
		text, lineCut := fitEscaped(line, maxSectionText-markerRoom, false)
		if lineCut {
			text += " " + truncatedMarker
		}
		need := runes(text)
		if cur.Len() > 0 {
			need++
		}
		if cur.Len() > 0 && runes(cur.String())+need > maxSectionText-markerRoom {
			flush()
			need = runes(text)
		}
		if need > budget-markerRoom || (cur.Len() == 0 && len(out) >= sections) {
			cut = true
			break
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(text)
		budget -= need
		cut = cut || lineCut
	}
	flush()
	if cut && len(out) > 0 && !strings.HasSuffix(out[len(out)-1], truncatedMarker) {
		out[len(out)-1] += "\n" + truncatedMarker
	}
	return out, cut
}

// renderQuestions lists a form's questions on the card for the message presentation; a modal
// presentation shows only how many there are. A prompt is cut at maxTitle and a label at
// maxOptionText escaped characters, so even ten options stay far within a section.
func renderQuestions(f Form) []string {
	if f.Presentation == PresentationModal {
		return []string{fmt.Sprintf("_%d question(s); press Answer to open the form._", len(f.Questions))}
	}
	var out []string
	for i, q := range f.Questions {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d. %s*", i+1, cutMarked(q.Prompt, maxTitle))
		if !q.Required {
			b.WriteString(" _(optional)_")
		}
		for _, o := range q.Options {
			b.WriteString("\n• " + cutMarked(o.Label, maxOptionText))
		}
		out = append(out, b.String())
	}
	return out
}

// cutMarked escapes untrusted text and cuts it at limit characters, ending a cut text with the
// marker.
func cutMarked(s string, limit int) string {
	text, cut := fitEscaped(s, limit, false)
	if cut {
		text += " " + truncatedMarker
	}
	return text
}

// renderButtons builds the actions block of an open card, or nil when it offers none. A card
// that shows its text cut offers no approving button: nobody approves what they did not see
// whole, and escaping can cut on Slack a text the feed's preview held whole.
func renderButtons(c Card, truncated bool) *goslack.ActionBlock {
	value := ref{ItemKey: c.ItemKey, Version: c.Version}.String()
	var elems []goslack.BlockElement
	for _, a := range c.Actions {
		if truncated && threadfeed.Approving(decisionOf[a]) {
			continue
		}
		b := goslack.NewButtonBlockElement(actionPrefix+string(a), value,
			goslack.NewTextBlockObject(goslack.PlainTextType, buttonLabels[a], false, false))
		switch a {
		case ActionApprove, ActionAllowOnce, ActionAllowThread, ActionAllowConversation, ActionAnswer:
			b = b.WithStyle(goslack.StylePrimary)
		case ActionDeny:
			b = b.WithStyle(goslack.StyleDanger)
		}
		elems = append(elems, b)
	}
	if len(elems) == 0 {
		return nil
	}
	return goslack.NewActionBlock(actionsBlockID, elems...)
}

// closingLine says how, by whom and when a card was settled.
func closingLine(c Closing) string {
	line := outcomeLabels[c.How]
	if line == "" {
		line = escapeText(string(c.How))
	}
	if m, ok := mention(c.ByUserID); ok {
		line += " by " + m
	} else if who := cmp.Or(c.ByName, c.ByUserID); who != "" {
		name, _ := fitEscaped(who, maxTitle, false)
		line += " by " + name
	}
	if !c.At.IsZero() {
		line += " · " + c.At.UTC().Format("2006-01-02 15:04 UTC")
	}
	if c.Note != "" {
		line += " · " + cutMarked(c.Note, maxNote)
	}
	return line
}

// outcomeWords is the closing label without its emoji, for notifications.
func outcomeWords(o Outcome) string {
	label := outcomeLabels[o]
	if _, words, ok := strings.Cut(label, " "); ok {
		return words
	}
	return escapeText(string(o))
}

// section is a mrkdwn section of already escaped text. Verbatim stops Slack from turning bare
// names and URLs in it into mentions and links.
func section(text string) *goslack.SectionBlock {
	return goslack.NewSectionBlock(mrkdwn(text), nil, nil)
}

func mrkdwn(text string) *goslack.TextBlockObject {
	return goslack.NewTextBlockObject(goslack.MarkdownType, text, false, true)
}
