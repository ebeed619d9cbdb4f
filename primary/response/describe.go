package response

import (
	"fmt"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
)

// MaxDescriptorBytes is the largest describe result returned inline; larger descriptors become
// a context document.
const MaxDescriptorBytes = 32 * 1024

// describeResult is the Agent CLI's describe result for fn: its descriptor, or a pointer to a
// context document holding it when it is too large to return inline.
func (r *Response) describeResult(fn catalog.Resolved, toolkit, function string) ([]byte, error) {
	desc := fn.Descriptor()
	if len(desc) <= MaxDescriptorBytes {
		return desc, nil
	}
	r.mu.Lock()
	name := r.docs.addSchema(toolkit+"\x00"+function, string(desc))
	r.mu.Unlock()
	return canonjson.Marshal(map[string]any{
		"context": map[string]any{
			"length":    utf8.RuneCount(desc),
			"name":      name,
			"operation": "context.read",
		},
		"function": function,
		"toolkit":  toolkit,
	})
}

// schemaDocName names the n-th oversize descriptor of a response.
func schemaDocName(n int) string { return fmt.Sprintf("tool-schema-%d", n) }
