package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/canonjson"
)

// schemaToolkit is an eager toolkit whose one function has the given input schema.
type schemaToolkit struct{ name, schema string }

func (s schemaToolkit) Name() string      { return s.name }
func (schemaToolkit) Description() string { return "A toolkit with one schema." }
func (schemaToolkit) Deferred() bool      { return false }
func (s schemaToolkit) Load(context.Context) (Definition, error) {
	return Definition{Functions: []Function{{Name: "f", Description: "f", InputSchema: json.RawMessage(s.schema)}}}, nil
}
func (schemaToolkit) Call(context.Context, Call) (Result, error) { return Result{}, nil }

// TestASchemaReferringOutsideItselfIsRefusedAtOnce: a "$ref" to a file, to a FIFO nobody
// writes or to the network is refused at registration without being opened, and the next
// toolkit registers.
func TestASchemaReferringOutsideItselfIsRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"const":"s3cret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry()
	for i, ref := range []string{"file://" + secret, "file://" + fifo, "https://example.org/s.json", "other.json"} {
		done := make(chan error, 1)
		go func() {
			done <- r.Register(context.Background(), schemaToolkit{name: "bad" + string(rune('a'+i)), schema: `{"type":"object","properties":{"x":{"$ref":"` + ref + `"}}}`})
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrOutsideDocument) {
				t.Errorf("$ref %s: %v", ref, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("$ref %s: the registration blocks", ref)
		}
	}
	// Inside itself is fine, and the registry still takes toolkits.
	good := `{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/n"}}}`
	if err := r.Register(context.Background(), schemaToolkit{name: "good", schema: good}); err != nil {
		t.Fatalf("a self-contained schema: %v", err)
	}
}

// defToolkit is an eager toolkit with a fixed definition.
type defToolkit struct {
	name string
	def  Definition
}

func (d defToolkit) Name() string                             { return d.name }
func (defToolkit) Description() string                        { return "A toolkit with a fixed definition." }
func (defToolkit) Deferred() bool                             { return false }
func (d defToolkit) Load(context.Context) (Definition, error) { return d.def, nil }
func (defToolkit) Call(context.Context, Call) (Result, error) { return Result{}, nil }

// TestASchemaRefersWithinItselfWhateverItsFunctionIsNamed: the characters of a function's name
// do not change where the references of its schema lead.
func TestASchemaRefersWithinItselfWhateverItsFunctionIsNamed(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/n"}}}`)
	for _, tc := range []struct{ test, function string }{
		{"Fragment", "a#b"}, {"Query", "a?b"}, {"Slash", "a/b"}, {"Percent", "a%zz"},
		{"Space", "a b"}, {"NonASCII", "grüße.v2"}, {"Dots", ".."},
	} {
		t.Run(tc.test, func(t *testing.T) {
			r := NewRegistry()
			tk := defToolkit{name: "tk#1", def: Definition{Functions: []Function{{Name: tc.function, InputSchema: schema}}}}
			if err := r.Register(context.Background(), tk); err != nil {
				t.Fatal(err)
			}
			fn, err := r.Snapshot(nil).Resolve(context.Background(), "tk#1", tc.function)
			if err != nil {
				t.Fatal(err)
			}
			if err := fn.Validate([]byte(`{"x":1}`)); err != nil {
				t.Errorf("valid arguments: %v", err)
			}
			if err := fn.Validate([]byte(`{"x":"s"}`)); !errors.Is(err, ErrInvalidArguments) {
				t.Errorf("invalid arguments: %v", err)
			}
		})
	}
}

// nestedSchema is an object schema whose arrays and objects nest exactly depth levels (depth ≥
// 3): each property level adds two, and the innermost schema is {} (one) or {"type":["object"]}
// (two).
func nestedSchema(depth int) string {
	s := `{}`
	if depth%2 == 0 {
		s = `{"type":["object"]}`
	}
	for range (depth - 1) / 2 {
		s = `{"type":"object","properties":{"x":` + s + `}}`
	}
	return s
}

// paddedSchema is an object schema of exactly size bytes.
func paddedSchema(size int) string {
	const frame = `{"type":"object","description":""}`
	return frame[:len(frame)-2] + strings.Repeat("d", size-len(frame)) + `"}`
}

// TestASchemaIsBoundedInDepthAndSize: a schema at the bounds registers and its describe result
// can be read back as Agent CLI JSON; one level deeper or one byte longer is refused.
func TestASchemaIsBoundedInDepthAndSize(t *testing.T) {
	for _, tc := range []struct {
		test, schema string
		refused      string // "" when accepted
	}{
		{"AtMaxDepth", nestedSchema(MaxSchemaDepth), ""},
		{"OneLevelTooDeep", nestedSchema(MaxSchemaDepth + 1), "nested 64 levels deep, over the 63"},
		{"DeeperThanJSONMayNest", nestedSchema(canonjson.MaxDepth + 1), "nested 65 levels deep"},
		{"AtMaxSize", paddedSchema(MaxSchemaBytes), ""},
		{"OneByteTooLarge", paddedSchema(MaxSchemaBytes + 1), "1048577 bytes, over the 1048576"},
	} {
		t.Run(tc.test, func(t *testing.T) {
			if !json.Valid([]byte(tc.schema)) {
				t.Fatalf("test schema is not JSON")
			}
			r := NewRegistry()
			tk := defToolkit{name: "tk", def: Definition{Functions: []Function{{Name: "f", InputSchema: json.RawMessage(tc.schema)}}}}
			err := r.Register(context.Background(), tk)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("Register = %v, want a refusal mentioning %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fn, err := r.Snapshot(nil).Resolve(context.Background(), "tk", "f")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := canonjson.ParseObject(fn.Descriptor()); err != nil {
				t.Errorf("describe result cannot be read back: %v", err)
			}
		})
	}
}

func TestJSONDepthCountsNestingOutsideStrings(t *testing.T) {
	for _, tc := range []struct {
		json string
		want int
	}{
		{`1`, 0}, {`"[{"`, 0}, {`{}`, 1}, {`[[]]`, 2}, {`[{"a":[1]},{}]`, 3},
		{`{"a":"[[["}`, 1}, {`{"a":"\"[[","b":"\\"}`, 1}, {`{"a\\":[{}]}`, 3},
	} {
		if got := jsonDepth([]byte(tc.json)); got != tc.want {
			t.Errorf("jsonDepth(%s) = %d, want %d", tc.json, got, tc.want)
		}
	}
}
