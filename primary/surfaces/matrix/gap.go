package matrix

import (
	"context"
	"fmt"
	"slices"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// gap reads the events a limited /sync timeline left out: those between the position the
// sync started from (since) and the first event it gave (from, its prev_batch), oldest
// first. A listener down while a room took more events than a timeline holds would
// otherwise miss answers.
func (l *Listener) gap(ctx context.Context, room id.RoomID, from, since string) ([]*event.Event, error) {
	var missed []*event.Event
	for from != "" {
		page, err := l.cli.Messages(ctx, room, from, since, mautrix.DirectionBackward, timelineFilter(), timelineLimit)
		if err != nil {
			return nil, fmt.Errorf("matrix: read the events %s missed: %w", room, err)
		}
		if len(page.Chunk) == 0 {
			break
		}
		missed = append(missed, page.Chunk...)
		from = page.End
	}
	slices.Reverse(missed)
	return missed, nil
}
