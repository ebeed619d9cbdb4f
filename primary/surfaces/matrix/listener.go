package matrix

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Cursor keeps the Listener's /sync position (the next_batch token) where the caller keeps
// its state, so a restarted Listener resumes after what it handled instead of replaying it.
type Cursor interface {
	// LoadSyncToken returns the saved token, or "" when there is none yet.
	LoadSyncToken(ctx context.Context) (string, error)
	SaveSyncToken(ctx context.Context, token string) error
}

// Receiver takes what the Listener reads, in the order of each room's timeline. An error
// stops the Listener before it saves the position, so the same events come again after a
// restart: the Receiver sees an answer at least once and tells repeats apart by EventID.
type Receiver interface {
	Answer(ctx context.Context, a Answer) error
	ModeCommand(ctx context.Context, m ModeCommand) error
}

// Listener reads answers to the bot's cards and mode commands from the bot's /sync, through
// mautrix's sync loop on a client of its own. Its first run, with no saved token, starts
// from now: what the rooms held before is not read.
type Listener struct {
	cli    *mautrix.Client // the Listener's own client: its syncer and store are the Listener's
	bot    id.UserID
	cursor Cursor
	recv   Receiver

	ready     chan struct{}
	readyOnce sync.Once
	cards     cardCache // touched only by the sync loop
}

// failedSyncDelay is how long the loop waits after a failed /sync before trying again.
const failedSyncDelay = 5 * time.Second

// NewListener returns a Listener syncing as the user bot is logged in as, with bot's access
// token and device. bot itself is not changed.
func NewListener(bot *mautrix.Client, cursor Cursor, recv Receiver) (*Listener, error) {
	cli, err := mautrix.NewClient(bot.HomeserverURL.String(), bot.UserID, bot.AccessToken)
	if err != nil {
		return nil, err
	}
	cli.DeviceID = bot.DeviceID
	l := &Listener{cli: cli, bot: bot.UserID, cursor: cursor, recv: recv, ready: make(chan struct{})}
	cli.Syncer = syncer{l}
	cli.Store = &syncStore{cursor: cursor}
	return l, nil
}

// Ready is closed once the Listener has handled its first /sync: from then on every answer
// sent to a card reaches the Receiver.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Run syncs until ctx ends (then it returns nil) or the Receiver, the Cursor, reading a card
// or the access token fails; the position is then where the last handled sync left it, so
// the caller may run a new Listener. Run is called once.
func (l *Listener) Run(ctx context.Context) error {
	defer l.cli.Client.CloseIdleConnections() // the client is the Listener's: nothing else reuses them
	err := l.cli.SyncWithContext(ctx)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// syncer is the Listener as mautrix's sync loop sees it.
type syncer struct{ l *Listener }

// ProcessResponse hands one /sync response's events to the Receiver, then saves the position.
// A response to a sync from no position holds the rooms' past: it only sets the position.
func (s syncer) ProcessResponse(ctx context.Context, resp *mautrix.RespSync, since string) error {
	if since != "" {
		for room, joined := range resp.Rooms.Join {
			events := joined.Timeline.Events
			if joined.Timeline.Limited {
				missed, err := s.l.gap(ctx, room, joined.Timeline.PrevBatch, since)
				if err != nil {
					return err
				}
				events = append(missed, events...)
			}
			for _, evt := range events {
				evt.RoomID = room
				if err := s.l.handle(ctx, evt); err != nil {
					return err
				}
			}
		}
	}
	if err := s.l.cursor.SaveSyncToken(ctx, resp.NextBatch); err != nil {
		return fmt.Errorf("matrix: save the sync position: %w", err)
	}
	s.l.readyOnce.Do(func() { close(s.l.ready) })
	return nil
}

// OnFailedSync retries after a pause unless the access token is no longer valid.
func (syncer) OnFailedSync(_ *mautrix.RespSync, err error) (time.Duration, error) {
	if errors.Is(err, mautrix.MUnknownToken) {
		return 0, err
	}
	return failedSyncDelay, nil
}

// timelineLimit is how many events a timeline or a page of missed events holds.
const timelineLimit = 100

// timelineFilter keeps only the room events the Listener reads.
func timelineFilter() *mautrix.FilterPart {
	return &mautrix.FilterPart{
		Limit: timelineLimit,
		Types: []event.Type{event.EventMessage, event.EventReaction, ToolApprovalResponseType},
	}
}

// GetFilterJSON asks only for the room events the Listener reads.
func (syncer) GetFilterJSON(id.UserID) *mautrix.Filter {
	nothing := &mautrix.FilterPart{NotTypes: []event.Type{{Type: "*"}}}
	return &mautrix.Filter{
		Presence:    nothing,
		AccountData: nothing,
		Room: &mautrix.RoomFilter{
			Timeline:    timelineFilter(),
			State:       nothing,
			Ephemeral:   nothing,
			AccountData: nothing,
		},
	}
}

// syncStore gives mautrix's loop the saved position. The loop saves each new position before
// it processes the events; that save is dropped here, and ProcessResponse saves it after, so
// a crash in between reads the events again rather than never.
type syncStore struct {
	cursor   Cursor
	filterID string // created again on every start: it is only the filter above
}

func (s *syncStore) SaveFilterID(_ context.Context, _ id.UserID, filterID string) error {
	s.filterID = filterID
	return nil
}

func (s *syncStore) LoadFilterID(context.Context, id.UserID) (string, error) { return s.filterID, nil }

func (s *syncStore) SaveNextBatch(context.Context, id.UserID, string) error { return nil }

func (s *syncStore) LoadNextBatch(ctx context.Context, _ id.UserID) (string, error) {
	return s.cursor.LoadSyncToken(ctx)
}
