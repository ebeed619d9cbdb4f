package surfaces_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/backoff"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/memory"
	"github.com/turncli/turncli/primary/surfaces"
	"github.com/turncli/turncli/primary/threadfeed"
)

// script is a feed that sends its messages after the cursor it is followed from, then ends
// the follow as a stopping primary does. Each message's cursor is its index plus one.
type script struct{ messages []threadfeed.Message }

func (s script) Follow(ctx context.Context, from threadfeed.Cursor, _ threadfeed.View, send func(threadfeed.Message) error) error {
	start := 0
	if from != "" {
		n, err := strconv.Atoi(string(from))
		if err != nil {
			return err
		}
		start = n
	}
	for i := start; i < len(s.messages); i++ {
		m := s.messages[i]
		m.Cursor = threadfeed.Cursor(strconv.Itoa(i + 1))
		if err := send(m); err != nil {
			return err
		}
	}
	return threadfeed.ErrStopping
}

// chat records what the delivery shows, as a chat system would keep it, and fails the sends
// it is told to.
type chat struct {
	shown   []string // "post <key>" or "edit <key> <message>", in order
	reports []string
	fail    map[string]int // item key: how many more sends of it fail
	posted  int
}

func (c *chat) Name() string                  { return "testchat" }
func (c *chat) Serves(channel, _ string) bool { return channel == "served" }
func (c *chat) View() threadfeed.View         { return threadfeed.View{} }

func (c *chat) Show(_ context.Context, it threadfeed.Item, shown store.SurfaceCard) (string, error) {
	if c.fail[it.Key] > 0 {
		c.fail[it.Key]--
		return "", errors.New("the chat system is down")
	}
	if shown.MessageID == "" {
		c.posted++
		msg := "m" + strconv.Itoa(c.posted)
		c.shown = append(c.shown, "post "+it.Key)
		return msg, nil
	}
	c.shown = append(c.shown, "edit "+it.Key+" "+shown.MessageID)
	return shown.MessageID, nil
}

func (c *chat) Report(_ context.Context, card store.SurfaceCard, ch threadfeed.Chunk) error {
	c.reports = append(c.reports, card.MessageID+" "+ch.Text)
	return nil
}

func item(event int64, key, channel string, state threadfeed.State) threadfeed.Message {
	return threadfeed.Message{Item: &threadfeed.Item{EventID: event, Key: key, Channel: channel, Thread: "t", State: state}}
}

func chunk(key, text string) threadfeed.Message {
	return threadfeed.Message{Chunk: &threadfeed.Chunk{Key: key, Text: text}}
}

func deliver(t *testing.T, db store.Store, feed surfaces.Feed, c *chat) {
	t.Helper()
	d, err := surfaces.NewDelivery(surfaces.DeliveryConfig{Feed: feed, Store: db, Surface: c,
		Retry: backoff.Policy{Min: time.Millisecond, Max: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s %q; want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s %q; want %q", what, got, want)
		}
	}
}

// TestADeliveryShowsEachChangeOnceAndResumesWhereItStopped: a card is posted when its item
// opens and edited as it changes; items of conversations the surface does not serve, and
// items it never saw open that are closed already, are passed over; a report follows its
// card; a delivery run again from the saved position shows nothing twice.
func TestADeliveryShowsEachChangeOnceAndResumesWhereItStopped(t *testing.T) {
	db := store.New(memory.New(), store.Options{})
	feed := script{messages: []threadfeed.Message{
		item(1, "approval/1", "served", threadfeed.StateOpen),
		item(2, "approval/2", "elsewhere", threadfeed.StateOpen),
		item(3, "prompt/1", "served", threadfeed.StateClosed), // closed before it was seen
		item(4, "approval/1", "served", threadfeed.StateClosed),
		item(5, "job/1", "served", threadfeed.StateOpen),
		item(6, "job/1", "served", threadfeed.StateClosed),
		chunk("job/1", "first"), chunk("job/1", "second"),
		chunk("job/9", "of a job never shown"),
	}}
	c := &chat{}
	deliver(t, db, feed, c)
	equal(t, "shown", c.shown, []string{"post approval/1", "edit approval/1 m1", "post job/1", "edit job/1 m2"})
	equal(t, "reports", c.reports, []string{"m2 first", "m2 second"})
	pos, err := db.SurfacePosition(context.Background(), "testchat", surfaces.PositionFeed)
	if err != nil || pos.Value != "8" {
		t.Fatalf("saved position %q, %v; want 8, past the last report shown", pos.Value, err)
	}
	card, err := db.SurfaceCard(context.Background(), "testchat", "approval/1")
	if err != nil || card.MessageID != "m1" || card.Shown != 4 || card.Room != "served" || card.Thread != "t" {
		t.Fatalf("card %+v, %v; want m1 showing event 4", card, err)
	}

	again := &chat{}
	deliver(t, db, feed, again)
	equal(t, "shown after a restart", again.shown, nil)
	equal(t, "reports after a restart", again.reports, nil)
}

// TestAFailedSendIsTriedAgainFromTheSavedPosition: a chat system that fails a send gets the
// same change again, and what came before it is not shown twice.
func TestAFailedSendIsTriedAgainFromTheSavedPosition(t *testing.T) {
	db := store.New(memory.New(), store.Options{})
	feed := script{messages: []threadfeed.Message{
		item(1, "approval/1", "served", threadfeed.StateOpen),
		item(2, "approval/2", "served", threadfeed.StateOpen),
	}}
	c := &chat{fail: map[string]int{"approval/2": 2}}
	deliver(t, db, feed, c)
	equal(t, "shown", c.shown, []string{"post approval/1", "post approval/2"})
}

// TestAPassedOverStretchIsSavedNowAndThen: a surface that shows nothing of a long stretch of
// the feed still saves its position, so a restart does not read it all again.
func TestAPassedOverStretchIsSavedNowAndThen(t *testing.T) {
	db := store.New(memory.New(), store.Options{})
	var messages []threadfeed.Message
	for i := range 250 {
		messages = append(messages, item(int64(i+1), "approval/"+strconv.Itoa(i+1), "elsewhere", threadfeed.StateOpen))
	}
	deliver(t, db, script{messages: messages}, &chat{})
	pos, err := db.SurfacePosition(context.Background(), "testchat", surfaces.PositionFeed)
	if err != nil || pos.Value != "200" {
		t.Fatalf("saved position %q, %v; want 200, the last hundredth passed over", pos.Value, err)
	}
}
