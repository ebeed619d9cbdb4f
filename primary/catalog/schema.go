package catalog

import (
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/turncli/turncli/internal/canonjson"
)

// Bounds of a function's input schema, for every toolkit: a definition with a schema over them
// is refused.
const (
	// MaxSchemaDepth is how deeply a schema's arrays and objects may nest, the schema object
	// itself being the first level. A describe result holds the schema one level deeper, and
	// no reader of the Agent CLI accepts JSON nested deeper than canonjson.MaxDepth.
	MaxSchemaDepth = canonjson.MaxDepth - 1
	// MaxSchemaBytes bounds a schema's JSON text. The catalog keeps every schema of every
	// loaded toolkit in memory, twice (compiled and as its describe result).
	MaxSchemaBytes = 1 << 20
)

// checkSchemaBounds refuses a schema's JSON text raw when it is over MaxSchemaBytes or nests
// deeper than MaxSchemaDepth.
func checkSchemaBounds(raw []byte) error {
	if len(raw) > MaxSchemaBytes {
		return fmt.Errorf("%d bytes, over the %d a schema may have", len(raw), MaxSchemaBytes)
	}
	if d := jsonDepth(raw); d > MaxSchemaDepth {
		return fmt.Errorf("nested %d levels deep, over the %d a schema may have", d, MaxSchemaDepth)
	}
	return nil
}

// jsonDepth is how deeply the arrays and objects of the JSON text data nest: 0 for a scalar, 1
// for {} or []. It does not validate data (the parser that follows does): brackets inside
// strings are skipped, and an unbalanced text counts as far as it goes.
func jsonDepth(data []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++ // the escaped character cannot end the string
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// ErrOutsideDocument reports a schema that refers ("$ref") to a document outside itself.
var ErrOutsideDocument = errors.New("a tool's schema cannot refer to documents outside itself")

// CompileSchema is the one way the primary compiles a schema from a tool host or an MCP server,
// doc (as jsonschema.UnmarshalJSON reads it) named url: a schema must stand on its own. The
// library's default loader reads file: URLs, so a "$ref" could otherwise make the primary read
// any local file and quote it in validation errors, or block every later registration on a
// FIFO nobody writes. The standard drafts' meta-schemas are built into the library and need no
// loader.
func CompileSchema(url string, doc any) (*jsonschema.Schema, error) {
	loader := &selfContained{}
	c := jsonschema.NewCompiler()
	c.UseLoader(loader)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	schema, err := c.Compile(url)
	if err != nil && loader.refused != "" {
		return nil, fmt.Errorf("%w: it refers to %q", ErrOutsideDocument, loader.refused)
	}
	return schema, err
}

// selfContained loads nothing, and remembers what it was asked for.
type selfContained struct{ refused string }

func (l *selfContained) Load(url string) (any, error) {
	if l.refused == "" {
		l.refused = url
	}
	return nil, ErrOutsideDocument
}
