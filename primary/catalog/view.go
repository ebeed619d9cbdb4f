package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
)

// View is a response's snapshot of the registry: the toolkits it may see, in catalog order.
// A View is immutable; rebinding a response's catalog takes a new one.
type View struct {
	entries []*Entry
	index   map[string]int
	// offers, when set, says which functions of an Advertiser toolkit this view offers.
	offers func(e *Entry, function string) bool
	// standard hides functions with traits (see Standard).
	standard bool
}

// Advertiser is implemented by a toolkit that offers some of its functions only to some
// responses. A function not offered to a response is not listed, searched, described or
// callable in its view: to that response it does not exist.
type Advertiser interface {
	Offers(function string, id Identity) bool
}

// For returns the view as the response with identity id sees it.
func (v *View) For(id Identity) *View {
	out := *v
	out.offers = func(e *Entry, function string) bool {
		adv, ok := e.toolkit.(Advertiser)
		return !ok || adv.Offers(function, id)
	}
	return &out
}

// Standard returns the view as the standard shell mode offers it: only functions that finish
// inside the command that calls them, so none with a trait (see Traits). A deferred toolkit not
// loaded yet is still listed as one item; once loaded, its functions with traits are hidden
// like those of any other toolkit.
func (v *View) Standard() *View {
	out := *v
	out.standard = true
	return &out
}

// ErrHiddenInStandard is in the chain of Resolve's error for a function the view would offer
// but for the standard shell mode: the function exists for this response (natively, for one),
// so the caller can say how to reach it instead of calling it unknown.
var ErrHiddenInStandard = fault.New(fault.InvalidArgument, "not offered in the standard shell mode")

// hiddenByStandard reports whether only the standard shell mode keeps e's function f from
// the view.
func (v *View) hiddenByStandard(e *Entry, f *compiledFunction) bool {
	return v.standard && f.traits.Any() && (v.offers == nil || v.offers(e, f.name))
}

// offered reports whether the view offers e's function f.
func (v *View) offered(e *Entry, f *compiledFunction) bool {
	if v.standard && f.traits.Any() {
		return false
	}
	return v.offers == nil || v.offers(e, f.name)
}

// Snapshot returns a View of the toolkits whose names match any of patterns (path.Match
// syntax); no patterns selects every toolkit.
func (r *Registry) Snapshot(patterns []string) *View {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v := &View{index: make(map[string]int)}
	for _, e := range r.entries {
		if selected(e.name, patterns) {
			v.index[e.name] = len(v.entries)
			v.entries = append(v.entries, e)
		}
	}
	return v
}

// Without returns a View like v without the toolkit name.
func (v *View) Without(name string) *View {
	i, ok := v.index[name]
	if !ok {
		return v
	}
	out := *v
	out.entries = nil
	out.index = make(map[string]int, len(v.entries)-1)
	for j, e := range v.entries {
		if j != i {
			out.index[e.name] = len(out.entries)
			out.entries = append(out.entries, e)
		}
	}
	return &out
}

// Selects reports whether a toolkit selection (names or path.Match patterns; none selects
// every toolkit) takes the toolkit name, as Snapshot does.
func Selects(patterns []string, name string) bool { return selected(name, patterns) }

func selected(name string, patterns []string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// ValidPattern reports whether p is a well-formed selection pattern.
func ValidPattern(p string) bool {
	_, err := path.Match(p, "")
	return p != "" && err == nil
}

// Resolved is a function a call or describe has found, with its toolkit loaded.
type Resolved struct {
	Entry    *Entry
	function *compiledFunction
}

// Descriptor is the canonical describe result of the function.
func (r Resolved) Descriptor() []byte { return r.function.descriptor }

// Traits are the function's traits.
func (r Resolved) Traits() Traits { return r.function.traits }

// Validate checks canonical arguments against the function's input schema; a failure wraps
// ErrInvalidArguments.
func (r Resolved) Validate(canonicalArgs []byte) error { return r.function.validate(canonicalArgs) }

// Resolve finds toolkit.function, loading a deferred toolkit the first time. Unknown names are
// an Invalid error naming what exists; a load failure is an Invalid error saying so.
func (v *View) Resolve(ctx context.Context, toolkit, function string) (Resolved, error) {
	i, ok := v.index[toolkit]
	if !ok {
		return Resolved{}, fault.Newf(fault.InvalidArgument, "Unknown toolkit %q; available toolkits: %s", toolkit, v.toolkitNames())
	}
	e := v.entries[i]
	l, err := e.load(ctx)
	if err != nil {
		return Resolved{}, fault.Newf(fault.InvalidArgument, "%s", err.Error())
	}
	f, ok := l.byName[function]
	if ok && v.hiddenByStandard(e, f) {
		return Resolved{}, fmt.Errorf("%w: function %q of toolkit %q", ErrHiddenInStandard, function, toolkit)
	}
	if !ok || !v.offered(e, f) {
		return Resolved{}, fault.Newf(fault.InvalidArgument, "Unknown function %q in toolkit %q; its functions: %s", function, toolkit, v.functionNames(e, l))
	}
	return Resolved{Entry: e, function: f}, nil
}

const maxNamesShown = 40

func (v *View) toolkitNames() string {
	names := make([]string, 0, len(v.entries))
	for _, e := range v.entries {
		names = append(names, e.name)
	}
	return joinNames(names)
}

func (v *View) functionNames(e *Entry, l *loadedToolkit) string {
	names := make([]string, 0, len(l.functions))
	for _, f := range l.functions {
		if v.offered(e, f) {
			names = append(names, f.name)
		}
	}
	return joinNames(names)
}

func joinNames(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	sort.Strings(names)
	if len(names) > maxNamesShown {
		return strings.Join(names[:maxNamesShown], ", ") + ", …"
	}
	return strings.Join(names, ", ")
}

// position is where a listing resumes: the entry index and the function index within it.
type position struct{ entry, function int }

// cursorFor encodes the position after the item (toolkit, function); function is empty for a
// deferred toolkit's single item. Cursors name items, not offsets, so a toolkit loading between
// pages does not shift the listing. The function is named by a digest, so a cursor stays within
// the 1024 characters a request may carry even for names of 128 multi-byte characters.
func cursorFor(toolkit, function string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(toolkit + "\x00" + functionDigest(function)))
}

// functionDigest is the short name of a function inside a cursor ("" for no function).
func functionDigest(function string) string {
	if function == "" {
		return ""
	}
	d := sha256.Sum256([]byte(function))
	return string(d[:12])
}

func (v *View) decodeCursor(c string) (position, error) {
	bad := fault.New(fault.InvalidArgument, clierr.InvalidCursor)
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return position{}, bad
	}
	toolkit, function, ok := strings.Cut(string(raw), "\x00")
	if !ok {
		return position{}, bad
	}
	i, ok := v.index[toolkit]
	if !ok {
		return position{}, bad
	}
	if function == "" {
		return position{entry: i + 1}, nil
	}
	l := v.entries[i].current()
	if l == nil {
		return position{}, bad
	}
	for j, f := range l.functions {
		if functionDigest(f.name) == function {
			return position{entry: i, function: j + 1}, nil
		}
	}
	return position{}, bad
}

// LoadedTraits returns the traits of toolkit.function when the view offers it and its toolkit
// is loaded; it never loads a toolkit (so admission can label a call at once without waiting
// for a deferred toolkit).
func (v *View) LoadedTraits(toolkit, function string) (Traits, bool) {
	i, ok := v.index[toolkit]
	if !ok {
		return Traits{}, false
	}
	e := v.entries[i]
	l := e.current()
	if l == nil {
		return Traits{}, false
	}
	f, ok := l.byName[function]
	if !ok || !v.offered(e, f) {
		return Traits{}, false
	}
	return f.traits, true
}
