package catalog

import (
	"strings"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
)

// Bounds of what discovery and calls take (contract section 5), for every route that offers
// them: the Agent CLI and the runtime's native tool calls.
const (
	MaxSelector        = 128  // characters of a toolkit, function or document name
	MaxQuery           = 1024 // characters of a search query
	MaxCursor          = 1024 // characters of a listing cursor
	DefaultListLimit   = 100
	MaxListLimit       = 1000
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
)

// ValidQuery reports whether q is a search query of 1..MaxQuery characters.
func ValidQuery(q string) bool {
	n := utf8.RuneCountInString(q)
	return n >= 1 && n <= MaxQuery && utf8.ValidString(q)
}

// Size budgets of discovery results, in bytes of canonical JSON (contract section 5).
const (
	MaxPageBytes   = 64 * 1024
	MaxSearchBytes = 16 * 1024
)

// item is one discovery entry: a prepared function, or a deferred toolkit not yet loaded.
type item struct {
	json     []byte
	toolkit  string
	function string // empty for a deferred toolkit
	search   string
}

// walk calls fn for each item from pos on, in catalog order, until fn returns false. It never
// loads a toolkit: a deferred toolkit that is not loaded yet is one item.
func (v *View) walk(pos position, fn func(item) bool) {
	for i := pos.entry; i < len(v.entries); i++ {
		e := v.entries[i]
		l := e.current()
		if l == nil {
			if i == pos.entry && pos.function > 0 {
				continue
			}
			if !fn(item{json: e.deferredItem, toolkit: e.name, search: e.searchText}) {
				return
			}
			continue
		}
		start := 0
		if i == pos.entry {
			start = pos.function
		}
		for _, f := range l.functions[min(start, len(l.functions)):] {
			if !v.offered(e, f) {
				continue
			}
			if !fn(item{json: f.listItem, toolkit: e.name, function: f.name, search: f.searchText}) {
				return
			}
		}
	}
}

// List returns one page of `{"items":[…],"next_cursor":…}` starting at cursor (empty: the
// start). The page holds at most limit items and stops early rather than exceed MaxPageBytes.
func (v *View) List(cursor string, limit int) ([]byte, error) {
	pos := position{}
	if cursor != "" {
		p, err := v.decodeCursor(cursor)
		if err != nil {
			return nil, err
		}
		pos = p
	}
	const head, tail = `{"items":[`, `],"next_cursor":`
	var (
		items    [][]byte
		size     = len(head) + len(tail) + len("null}")
		hasMore  bool
		lastNext string
	)
	v.walk(pos, func(it item) bool {
		if len(items) == limit {
			hasMore = true
			return false
		}
		next := cursorFor(it.toolkit, it.function)
		// The page must fit even if this item is the last one and a cursor follows it.
		grown := size + len(it.json) + len(`""`) + len(next) - len("null")
		if len(items) > 0 {
			grown++
		}
		if grown > MaxPageBytes && len(items) > 0 {
			hasMore = true
			return false
		}
		size += len(it.json)
		if len(items) > 0 {
			size++
		}
		items = append(items, it.json)
		lastNext = next
		return true
	})
	out := make([]byte, 0, size+len(lastNext)+2)
	out = append(out, head...)
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	out = append(out, tail...)
	if hasMore {
		out, _ = canonjson.Append(out, lastNext)
	} else {
		out = append(out, "null"...)
	}
	return append(out, '}'), nil
}

// Search returns `{"items":[…]}`: up to limit items, in catalog order, whose toolkit, function
// or description contain every whitespace-separated word of query, case-insensitively; toolkit,
// when not empty, keeps only that toolkit's items. A result over MaxSearchBytes is refused.
func (v *View) Search(query, toolkit string, limit int) ([]byte, error) {
	words := strings.Fields(strings.ToLower(query))
	out := []byte(`{"items":[`)
	n := 0
	v.walk(position{}, func(it item) bool {
		if toolkit != "" && it.toolkit != toolkit {
			return true
		}
		for _, w := range words {
			if !strings.Contains(it.search, w) {
				return true
			}
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, it.json...)
		n++
		return n < limit && len(out) <= MaxSearchBytes
	})
	out = append(out, "]}"...)
	if len(out) > MaxSearchBytes {
		return nil, fault.New(fault.InvalidArgument, clierr.SearchTooLarge)
	}
	return out, nil
}
