package response

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
)

// MaxContextPageBytes bounds a context.list page and a context.read result.
const MaxContextPageBytes = 64 * 1024

// documents are a response's context documents, in the order they were added.
type documents struct {
	names   []string
	texts   map[string]string
	schemas map[string]string // "toolkit\x00function" -> document name
}

func (d *documents) init(docs []Document) {
	for _, doc := range docs {
		d.add(doc.Name, doc.Text)
	}
}

func (d *documents) add(name, text string) {
	if d.texts == nil {
		d.texts = make(map[string]string)
	}
	d.names = append(d.names, name)
	d.texts[name] = text
}

// addSchema stores an oversize descriptor once per function and returns its document name.
func (d *documents) addSchema(key, text string) string {
	if name, ok := d.schemas[key]; ok {
		return name
	}
	if d.schemas == nil {
		d.schemas = make(map[string]string)
	}
	name := schemaDocName(len(d.schemas) + 1)
	for _, taken := d.texts[name]; taken; _, taken = d.texts[name] { // a runtime document may use the name
		name += "-schema"
	}
	d.schemas[key] = name
	d.add(name, text)
	return name
}

// ContextList returns a page of `{"items":[{"length","name"}…],"next_cursor"}`.
func (r *Response) ContextList(cursor string, limit int) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, clierr.ErrUnauthenticated
	}
	start := 0
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, fault.New(fault.InvalidArgument, clierr.InvalidCursor)
		}
		start = -1
		for i, n := range r.docs.names {
			if n == string(raw) {
				start = i + 1
			}
		}
		if start < 0 {
			return nil, fault.New(fault.InvalidArgument, clierr.InvalidCursor)
		}
	}
	out := []byte(`{"items":[`)
	const reserve = len(`],"next_cursor":null}`) + 2
	n, next := 0, ""
	for i := start; i < len(r.docs.names); i++ {
		name := r.docs.names[i]
		item, _ := canonjson.Marshal(map[string]any{"length": utf8.RuneCountInString(r.docs.texts[name]), "name": name})
		cur := base64.RawURLEncoding.EncodeToString([]byte(name))
		if n == limit || (n > 0 && len(out)+1+len(item)+reserve+len(cur) > MaxContextPageBytes) {
			next = base64.RawURLEncoding.EncodeToString([]byte(r.docs.names[i-1]))
			break
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, item...)
		n++
	}
	out = append(out, `],"next_cursor":`...)
	if next == "" {
		out = append(out, "null"...)
	} else {
		out, _ = canonjson.Append(out, next)
	}
	return append(out, '}'), nil
}

// ContextRead returns `{"name","next_offset","text"}`: up to limit code points of the document
// from offset, fewer if the JSON would exceed MaxContextPageBytes.
func (r *Response) ContextRead(name string, offset, limit int) ([]byte, error) {
	r.mu.Lock()
	text, ok := r.docs.texts[name]
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, clierr.ErrUnauthenticated
	}
	if !ok {
		return nil, fault.New(fault.InvalidArgument, clierr.ContextUnavailable)
	}
	runes := []rune(text)
	if offset > len(runes) {
		return nil, fault.Newf(fault.InvalidArgument, "offset %d is past the end of context document %q (length %d)", offset, name, len(runes))
	}
	end := min(offset+limit, len(runes))
	for {
		var next any
		if end < len(runes) {
			next = end
		}
		out, err := canonjson.Marshal(map[string]any{"name": name, "next_offset": next, "text": string(runes[offset:end])})
		if err != nil {
			return nil, err
		}
		if len(out) <= MaxContextPageBytes || end-offset <= 1 {
			return out, nil
		}
		// Shrink in proportion to the overflow (at least by one code point): shrinking by the
		// overflow itself would leave a page of one code point when characters escape to
		// several bytes each.
		end = offset + max(1, min(end-offset-1, (end-offset)*MaxContextPageBytes/len(out)))
	}
}
