package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
