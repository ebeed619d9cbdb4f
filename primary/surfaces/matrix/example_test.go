package matrix_test

import (
	"context"
	"log"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/turncli/turncli/primary/surfaces/matrix"
)

// decisions is what a caller's Receiver might look like: it checks the sender, records the
// decision and refuses in the thread otherwise.
type decisions struct {
	surface *matrix.Surface
	linked  map[id.UserID]bool
}

func (d decisions) Answer(ctx context.Context, a matrix.Answer) error {
	if !d.linked[a.Sender] {
		_, err := d.surface.Notice(ctx, a.Room, a.Thread, a.EventID, string(a.Sender)+" only linked accounts can decide")
		return err
	}
	// Record a.Decision for the item a.Key, first decision wins; a.EventID tells repeats apart.
	return nil
}

func (d decisions) ModeCommand(context.Context, matrix.ModeCommand) error { return nil }

func Example() {
	ctx := context.Background()
	bot, err := mautrix.NewClient("https://matrix.example", "@turncli:example", "access token")
	if err != nil {
		log.Fatal(err)
	}
	bot.DeviceID = "TURNCLI" // a fixed device: transaction ids are remembered per access token
	surface := matrix.New(bot)

	card := matrix.Card{
		Key: "approval/7", Version: 1, Kind: matrix.KindCommandApproval,
		Room: "!room:example", Thread: "$root",
		Title: "Run a background command", Lines: []string{"Requested by coder"},
		Text:    "make deploy",
		Actions: []matrix.Decision{matrix.DecisionApprove, matrix.DecisionDeny, matrix.DecisionComment},
	}
	cardID, err := surface.Post(ctx, card) // keep cardID with the item
	if err != nil {
		log.Fatal(err)
	}

	var cursor matrix.Cursor // the caller's durable row for the sync position
	listener, err := matrix.NewListener(bot, cursor, decisions{surface: surface})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = listener.Run(ctx) }()

	// Once the item is decided, on any surface, close the card with the time the item's record
	// holds, so closing it again after a crash writes the same edit.
	var decidedAt time.Time
	_, err = surface.Close(ctx, card, cardID, matrix.Closing{How: matrix.HowApproved, By: "@b:example", At: decidedAt})
	if err != nil {
		log.Fatal(err)
	}
}
