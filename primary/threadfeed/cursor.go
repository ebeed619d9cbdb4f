package threadfeed

import (
	"strconv"
	"strings"

	"github.com/turncli/turncli/internal/fault"
)

// Cursor is a reader's place in the feed, to resume from: opaque to readers, who keep the
// cursor of the last message they handled and read after it. The empty cursor is the feed's
// start. It names an event and, in the middle of a report, how many of its chunks were read:
// resuming there sends the rest of the report and not the item again.
type Cursor string

// MaxCursorBytes bounds a cursor a reader hands back.
const MaxCursorBytes = 64

// place is a decoded cursor: every event up to event was read, except that when mid is set
// only the first chunks of event's report were.
type place struct {
	event  int64
	chunks int
	mid    bool
}

// errCursor refuses a cursor this feed did not give.
var errCursor = fault.New(fault.InvalidArgument, "the cursor is not one the thread feed gave; resume from a cursor it sent, or from the start with an empty one")

// parseCursor decodes c: "<event>" or "<event>.<chunks read>".
func parseCursor(c Cursor) (place, error) {
	if c == "" {
		return place{}, nil
	}
	if len(c) > MaxCursorBytes {
		return place{}, errCursor
	}
	event, chunks, mid := strings.Cut(string(c), ".")
	id, err := strconv.ParseInt(event, 10, 64)
	if err != nil || id < 0 || strconv.FormatInt(id, 10) != event {
		return place{}, errCursor
	}
	p := place{event: id}
	if mid {
		n, err := strconv.Atoi(chunks)
		if err != nil || n < 0 || strconv.Itoa(n) != chunks || id == 0 {
			return place{}, errCursor
		}
		p.chunks, p.mid = n, true
	}
	return p, nil
}

// cursor encodes p.
func (p place) cursor() Cursor {
	c := strconv.FormatInt(p.event, 10)
	if p.mid {
		c += "." + strconv.Itoa(p.chunks)
	}
	return Cursor(c)
}
