package catalog

import (
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

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
