package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/turncli/turncli/internal/canonjson"
)

// Registry is the set of toolkits the primary knows, in registration order (catalog order).
type Registry struct {
	mu      sync.RWMutex
	entries []*Entry
	byName  map[string]*Entry
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: make(map[string]*Entry)}
}

// Entry is one registered toolkit and, once loaded, its compiled functions.
type Entry struct {
	toolkit     Toolkit
	name        string
	description string
	// deferredItem is the discovery item shown while a deferred toolkit is not loaded.
	deferredItem []byte
	searchText   string

	// loadSlot serialises Load so a deferred toolkit is loaded once; a channel rather than a
	// mutex so a caller whose context ends stops waiting behind someone else's slow load.
	loadSlot chan struct{}
	mu       sync.RWMutex
	loaded   *loadedToolkit // nil until loaded
	loads    int
}

type loadedToolkit struct {
	instructions []string
	functions    []*compiledFunction
	byName       map[string]*compiledFunction
}

type compiledFunction struct {
	name        string
	description string
	schema      *jsonschema.Schema
	descriptor  []byte // canonical describe result
	listItem    []byte // canonical discovery item
	searchText  string // lower-cased toolkit, function and description
	traits      Traits
}

// Register adds a toolkit. An eager toolkit is loaded now, so a broken definition fails here
// and not on a caller's first describe.
func (r *Registry) Register(ctx context.Context, tk Toolkit) error {
	name := tk.Name()
	if !ValidName(name) {
		return fmt.Errorf("toolkit name %q must be 1..%d characters, all printable", name, MaxSelector)
	}
	e := &Entry{toolkit: tk, name: name, description: tk.Description(), loadSlot: make(chan struct{}, 1)}
	item, err := canonjson.Marshal(map[string]any{"deferred": true, "description": deferredDescription(name, e.description), "toolkit": name})
	if err != nil {
		return err
	}
	e.deferredItem = item
	e.searchText = strings.ToLower(name + "\n" + e.description)
	if !tk.Deferred() {
		if _, err := e.load(ctx); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[name]; dup {
		return fmt.Errorf("toolkit %q is already registered", name)
	}
	r.entries = append(r.entries, e)
	r.byName[name] = e
	return nil
}

// Lookup returns the registered toolkit named name.
func (r *Registry) Lookup(name string) (*Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.byName[name]
	return e, ok
}

// Name is the toolkit's name.
func (e *Entry) Name() string { return e.name }

// Toolkit is the registered implementation.
func (e *Entry) Toolkit() Toolkit { return e.toolkit }

// Loads reports how many times the toolkit's Load has succeeded (1 at most, by design).
func (e *Entry) Loads() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.loads
}

func (e *Entry) current() *loadedToolkit {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.loaded
}

// load returns the compiled toolkit, calling the toolkit's Load the first time. A failed load
// is not remembered: the next describe or call tries again.
func (e *Entry) load(ctx context.Context) (*loadedToolkit, error) {
	if l := e.current(); l != nil {
		return l, nil
	}
	select {
	case e.loadSlot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-e.loadSlot }()
	if l := e.current(); l != nil {
		return l, nil
	}
	def, err := e.toolkit.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("toolkit %q could not be loaded: %w", e.name, err)
	}
	l, err := compileToolkit(e.name, def)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.loaded = l
	e.loads++
	e.mu.Unlock()
	return l, nil
}

func compileToolkit(toolkit string, def Definition) (*loadedToolkit, error) {
	l := &loadedToolkit{
		instructions: nonNil(def.Instructions),
		byName:       make(map[string]*compiledFunction, len(def.Functions)),
	}
	for _, f := range def.Functions {
		if _, dup := l.byName[f.Name]; dup {
			return nil, fmt.Errorf("toolkit %q: function %q is defined twice", toolkit, f.Name)
		}
		cf, err := compileFunction(toolkit, l.instructions, f)
		if err != nil {
			return nil, err
		}
		l.functions = append(l.functions, cf)
		l.byName[f.Name] = cf
	}
	return l, nil
}

// Why a function cannot be defined: a failure of CheckFunction, and of Register or a load
// because of one function, wraps one of these.
var (
	// ErrInvalidName: the function's name is not a ValidName.
	ErrInvalidName = fmt.Errorf("function name must be 1..%d characters, all printable", MaxSelector)
	// ErrInvalidSchema: the input schema is not JSON, is over MaxSchemaDepth or
	// MaxSchemaBytes, refers outside itself (ErrOutsideDocument) or does not compile.
	ErrInvalidSchema = errors.New("input schema")
)

// CheckFunction reports why f cannot be a function of the toolkit named toolkit, or nil. It
// applies the rules Register and every load apply to each function of a definition; those
// refuse the whole definition for one bad function. A toolkit that gathers its functions from
// a source it does not control (an MCP server) checks each one and leaves out those that fail.
// The rule that names are unique within a toolkit is the caller's to keep.
func CheckFunction(toolkit string, f Function) error {
	_, err := compileFunction(toolkit, nil, f)
	return err
}

var anyObjectSchema = []byte(`{"type":"object"}`)

func compileFunction(toolkit string, toolkitInstructions []string, f Function) (*compiledFunction, error) {
	if !ValidName(f.Name) {
		return nil, fmt.Errorf("toolkit %q function %q: %w", toolkit, f.Name, ErrInvalidName)
	}
	invalidSchema := func(err error) error {
		return fmt.Errorf("toolkit %q function %q: %w: %w", toolkit, f.Name, ErrInvalidSchema, err)
	}
	raw := []byte(f.InputSchema)
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = anyObjectSchema
	}
	if err := checkSchemaBounds(raw); err != nil {
		return nil, invalidSchema(err)
	}
	schemaValue, err := canonjson.Parse(raw)
	if err != nil {
		return nil, invalidSchema(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, invalidSchema(err)
	}
	schema, err := CompileSchema(schemaURL(toolkit, f.Name), doc)
	if err != nil {
		return nil, invalidSchema(err)
	}
	instructions := append(append([]string{}, toolkitInstructions...), f.Instructions...)
	descriptor, err := canonjson.Marshal(map[string]any{
		"description":  f.Description,
		"function":     f.Name,
		"input_schema": schemaValue,
		"instructions": stringsToAny(instructions),
		"toolkit":      toolkit,
	})
	if err != nil {
		return nil, err
	}
	listItem, err := canonjson.Marshal(map[string]any{
		"description": listDescription(f.Description),
		"function":    f.Name,
		"toolkit":     toolkit,
	})
	if err != nil {
		return nil, err
	}
	return &compiledFunction{
		listItem:    listItem,
		name:        f.Name,
		description: f.Description,
		schema:      schema,
		descriptor:  descriptor,
		searchText:  strings.ToLower(toolkit + "\n" + f.Name + "\n" + f.Description),
		traits:      f.Traits,
	}, nil
}

// schemaURL names the input schema of toolkit.function for the compiler. Each name is one
// escaped path segment, so that no character of a name ("#", "?", "/", a control character)
// can change the URL's meaning or make it unparsable.
func schemaURL(toolkit, function string) string {
	return "turncli:///" + url.PathEscape(toolkit) + "/" + url.PathEscape(function) + ".json"
}

// ErrInvalidArguments is the failure of arguments that do not match a function's schema.
var ErrInvalidArguments = errors.New("Invalid tool arguments")

// validate checks canonical arguments against the function's schema.
func (f *compiledFunction) validate(canonicalArgs []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(canonicalArgs))
	if err != nil {
		return ErrInvalidArguments
	}
	if err := f.schema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("%w: %s", ErrInvalidArguments, firstCause(ve))
		}
		return ErrInvalidArguments
	}
	return nil
}

// firstCause names the innermost failing location, short enough for an outcome.
func firstCause(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	loc := "/" + strings.Join(ve.InstanceLocation, "/")
	msg := ve.ErrorKind.LocalizedString(englishPrinter)
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return "at " + loc + ": " + msg
}

var englishPrinter = message.NewPrinter(language.English)

// ValidSelector reports whether s can name a toolkit, function or document: 1..MaxSelector
// characters of valid UTF-8.
func ValidSelector(s string) bool {
	n := utf8.RuneCountInString(s)
	return n >= 1 && n <= MaxSelector && utf8.ValidString(s)
}

// ValidName reports whether s may name a toolkit or a function a toolkit defines: a selector
// (ValidSelector) of printable characters only, that is letters, marks, numbers, punctuation,
// symbols and the ASCII space (unicode.IsPrint). Names reach terminals, shell command lines and
// logs, where a control character, a bidirectional override or an invisible character could
// change what a person or an agent reads. A request may carry any selector: one that is not a
// valid name names nothing.
func ValidName(s string) bool {
	return ValidSelector(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func stringsToAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Reload forgets the toolkit's loaded definition (its implementation changed, e.g. a tool host
// reconnected with new functions) and, for an eager toolkit, loads it again now. Responses see
// the new definition on their next discovery, describe or call.
func (e *Entry) Reload(ctx context.Context) error {
	select {
	case e.loadSlot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	e.mu.Lock()
	e.loaded = nil
	e.mu.Unlock()
	<-e.loadSlot
	if e.toolkit.Deferred() {
		return nil
	}
	_, err := e.load(ctx)
	return err
}

// MaxListDescriptionBytes bounds a description in a discovery item, measured as canonical JSON,
// so that every item fits a 64 KiB page with room for its names and cursor; describe returns the
// full text.
const MaxListDescriptionBytes = 60 * 1024

func listDescription(d string) string { return shortened(d, MaxListDescriptionBytes) }

// shortened is d, cut with a marker saying so when its canonical JSON exceeds budget bytes.
func shortened(d string, budget int) string {
	encoded, _ := canonjson.Marshal(d)
	if len(encoded) <= budget {
		return d
	}
	const marker = " … (shortened; tools describe shows all of it)"
	cut := len(d)
	for {
		cut -= max(1, (len(encoded)-budget)/6) // a byte encodes to at most 6
		for cut > 0 && !utf8.RuneStart(d[cut]) {
			cut--
		}
		short := d[:cut] + marker
		if encoded, _ = canonjson.Marshal(short); len(encoded) <= budget {
			return short
		}
	}
}

// deferredDescription is the description in a deferred toolkit's discovery item: the
// toolkit's own, then the command that loads it and names its functions, since listing and
// searching never load it. Both fit the budget of listDescription.
func deferredDescription(name, description string) string {
	hint := " (not loaded yet: `mindroom-agent tools describe " + ShellWord(name) + "` loads it and names its functions)"
	encoded, _ := canonjson.Marshal(hint)
	return shortened(description, MaxListDescriptionBytes-len(encoded)) + hint
}

// ShellWord is s as one word of a POSIX shell command line, for commands quoted in messages.
func ShellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/:@+=,", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
