package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
)

// parseID reads a record id argument.
func parseID(what, s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, usagef("%s must be a positive number, not %q", what, s)
	}
	return id, nil
}

// conversationFlags are the --channel and --thread filters of a list, or the conversation a
// setting is about.
type conversationFlags struct{ channel, thread string }

func (f *conversationFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.channel, "channel", "", "the conversation's channel (room)")
	fs.StringVar(&f.thread, "thread", "", "the conversation's thread, with --channel (empty: the channel's main timeline)")
}

// filter is the conversation to filter by: nil when no --channel was given.
func (f *conversationFlags) filter() (*conversationv1.Conversation, error) {
	if f.channel == "" {
		if f.thread != "" {
			return nil, usageError("--thread needs --channel")
		}
		return nil, nil
	}
	return &conversationv1.Conversation{Channel: f.channel, Thread: f.thread}, nil
}

// required is the conversation a setting is about; --channel must be given.
func (f *conversationFlags) required() (*conversationv1.Conversation, error) {
	if f.channel == "" {
		return nil, usageError("--channel is required")
	}
	return &conversationv1.Conversation{Channel: f.channel, Thread: f.thread}, nil
}

func conversationText(c *conversationv1.Conversation) string {
	if c.GetThread() == "" {
		return c.GetChannel()
	}
	return c.GetChannel() + " / " + c.GetThread()
}

// choice is a flag whose value is one of a fixed set of words, each standing for an enum
// value.
type choice[E ~int32] struct {
	words map[string]E
	value E
	set   string
}

func newChoice[E ~int32](words map[string]E) *choice[E] { return &choice[E]{words: words} }

func (c *choice[E]) String() string { return c.set }

func (c *choice[E]) Set(s string) error {
	v, ok := c.words[s]
	if !ok {
		return fmt.Errorf("must be one of %s", c.names())
	}
	c.value, c.set = v, s
	return nil
}

func (c *choice[E]) names() string { return wordList(c.words) }

// wordList is the words a value may be, in order: "ask, auto, admin" reads "admin, ask, auto".
func wordList[E any](words map[string]E) string {
	names := make([]string, 0, len(words))
	for w := range words {
		names = append(names, w)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// page is the --limit of a list: how many records it prints, fetched a page at a time.
type page struct{ limit int }

func (p *page) register(fs *flag.FlagSet) {
	fs.IntVar(&p.limit, "limit", 100, "print at most this many (0: all)")
}

// collect fetches pages with get until limit records or the last page; get returns a page's
// records and the next page's token.
func collect[R any](ctx context.Context, p page, get func(ctx context.Context, size uint32, token string) ([]R, string, error)) ([]R, error) {
	var out []R
	token := ""
	for {
		size := uint32(1000)
		if p.limit > 0 {
			size = uint32(min(1000, p.limit-len(out)))
		}
		records, next, err := get(ctx, size, token)
		if err != nil {
			return nil, err
		}
		out = append(out, records...)
		if next == "" || (p.limit > 0 && len(out) >= p.limit) {
			return out, nil
		}
		token = next
	}
}
