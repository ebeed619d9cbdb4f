package surfaces

import (
	"context"
	"encoding/json"

	"github.com/turncli/turncli/primary/threadfeed"
)

// Relay is what a surface relays people's answers through, as the chat account that gave
// them: the thread feed's relays (threadfeed.Feed).
type Relay interface {
	Item(ctx context.Context, key string, cardBytes int) (threadfeed.Item, error)
	Decide(ctx context.Context, id threadfeed.Identity, key string, decision threadfeed.Action, text string, seen threadfeed.Seen) (threadfeed.Item, error)
	SubmitForm(ctx context.Context, id threadfeed.Identity, key string, revision int64, answers json.RawMessage) (threadfeed.Item, error)
}

// Lines are what every surface's card of an item says besides its title and decided text:
// whom it serves, where a command would run, and a command approval's comments. Every line
// holds untrusted text.
func Lines(it threadfeed.Item) []string {
	var lines []string
	switch {
	case it.Requester != "" && it.Agent != "":
		lines = append(lines, "Requested by "+it.Requester+" for "+it.Agent)
	case it.Requester != "":
		lines = append(lines, "Requested by "+it.Requester)
	case it.Agent != "":
		lines = append(lines, "From "+it.Agent)
	}
	if it.Workdir != "" {
		lines = append(lines, "In "+it.Workdir)
	}
	for _, c := range it.Comments {
		lines = append(lines, "Comment by "+c.By+": "+c.Text)
	}
	return lines
}

// Outcome is how a closed item ended, in the words every surface's card says it:
// approved (allowed too), denied (changes requested too), answered, expired, cancelled or
// finished.
func Outcome(c threadfeed.Closing) string {
	switch c.How {
	case threadfeed.ClosedDecided:
		if c.Decision == threadfeed.ActionDeny || c.Decision == threadfeed.ActionComment {
			return "denied"
		}
		return "approved"
	case threadfeed.ClosedAnswered:
		return "answered"
	case threadfeed.ClosedExpired:
		return "expired"
	case threadfeed.ClosedCancelled:
		return "cancelled"
	}
	return "finished"
}
