package matrix

import (
	"context"
	"fmt"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// postedPageSize is how many thread events one relations request reads.
const postedPageSize = 100

// Posted returns the event of the card already in its thread at its version, or "" when the
// thread holds none. A transaction id stops a double post only while the homeserver
// remembers it (Dendrite forgets on restart), so a caller that cannot tell whether a post
// went through looks here before posting again. It reads the thread newest first.
func (s *Surface) Posted(ctx context.Context, card Card) (id.EventID, error) {
	if card.Room == "" || card.Thread == "" {
		return "", ErrNoThread
	}
	req := &mautrix.ReqGetRelations{RelationType: event.RelThread, Dir: mautrix.DirectionBackward, Limit: postedPageSize}
	for {
		page, err := s.cli.GetRelations(ctx, card.Room, card.Thread, req)
		if err != nil {
			return "", fmt.Errorf("matrix: read the thread %s: %w", card.Thread, err)
		}
		for _, evt := range page.Chunk {
			known := cardOf(evt, s.cli.UserID)
			if known != nil && known.mark.Key == card.Key && known.mark.Version == card.Version && known.mark.Closed == "" {
				return evt.ID, nil
			}
		}
		if page.NextBatch == "" || len(page.Chunk) == 0 {
			return "", nil
		}
		req.From = page.NextBatch
	}
}
