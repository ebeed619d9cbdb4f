package threadfeed

import (
	"github.com/turncli/turncli/internal/fault"
)

// View is how a reader reads the feed: which conversation, and the sizes its chat surface
// shows.
type View struct {
	// Channel, when set, selects one conversation: Thread is compared with it, empty being the
	// channel's main timeline. Empty selects every conversation.
	Channel, Thread string
	// ChunkBytes is the size of a report's chunks: MinChunkBytes..MaxChunkBytes, zero for
	// DefaultChunkBytes.
	ChunkBytes int
	// CardBytes is how much of an item's text the reader's card shows: at most MaxCardBytes;
	// zero when it shows the whole text. A longer text's preview is cut to it.
	CardBytes int
}

// Limits of a View.
const (
	MinChunkBytes     = 1 << 10
	MaxChunkBytes     = 1 << 20
	DefaultChunkBytes = 32 << 10
	MaxCardBytes      = 64 << 10
)

// withDefaults checks v and fills its zero chunk size.
func (v View) withDefaults() (View, error) {
	switch {
	case v.Channel == "" && v.Thread != "":
		return View{}, fault.New(fault.InvalidArgument, "a thread needs its channel")
	case v.ChunkBytes == 0:
		v.ChunkBytes = DefaultChunkBytes
	case v.ChunkBytes < MinChunkBytes || v.ChunkBytes > MaxChunkBytes:
		return View{}, fault.Newf(fault.InvalidArgument, "the chunk size is %d bytes; %d..%d are allowed", v.ChunkBytes, MinChunkBytes, MaxChunkBytes)
	}
	if err := checkCardBytes(v.CardBytes); err != nil {
		return View{}, err
	}
	return v, nil
}

// checkCardBytes checks a card size a reader gives.
func checkCardBytes(n int) error {
	if n < 0 || n > MaxCardBytes {
		return fault.Newf(fault.InvalidArgument, "the card size is %d bytes; 0..%d are allowed (0: the whole text is shown)", n, MaxCardBytes)
	}
	return nil
}

// Check reports a View no reader may use.
func (v View) Check() error {
	_, err := v.withDefaults()
	return err
}
