package threadfeed

import "github.com/turncli/turncli/internal/fault"

// Seen is what a person saw of an item before deciding, as the reader reports it.
type Seen struct {
	// CardBytes is the card size the reader showed the item's text in (its View.CardBytes);
	// zero when it showed the whole text.
	CardBytes int
	// FullText says the person opened the whole text (a "show all" the reader offers).
	FullText bool
}

// approving are the decisions that let something run or a tool act.
var approving = map[Action]bool{
	ActionApprove: true, ActionAllowOnce: true, ActionAllowThread: true, ActionAllowConversation: true,
}

// Approving reports whether decision lets something run or a tool act: what nobody may decide
// on a text they did not see whole.
func Approving(decision Action) bool { return approving[decision] }

// checkSeen is the rule that nobody approves what they did not see whole: an approval or an
// allowance of an item whose text the reader's card cut short is refused unless the person
// opened the full text. A denial or a comment needs no full reading and always passes.
func checkSeen(decision Action, it Item, seen Seen) error {
	if !approving[decision] || !it.PreviewTruncated || seen.FullText {
		return nil
	}
	return fault.Newf(fault.FailedPrecondition,
		"%s was shown cut to %d of its %d bytes; open its full text before you %s it (denying or commenting needs no full reading)",
		it.Key, len(it.Preview), len(it.Text), decision)
}
