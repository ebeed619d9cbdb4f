package testtk

import (
	"encoding/json"
	"fmt"
)

// hugeProperties is how many optional properties huge_schema declares: enough for more than
// 32 KiB of canonical JSON, the limit past which describe answers with a context document.
const hugeProperties = 400

// hugeSchema builds huge_schema's input schema.
func hugeSchema() json.RawMessage {
	props := make(map[string]any, hugeProperties)
	for i := 1; i <= hugeProperties; i++ {
		props[fmt.Sprintf("option_%03d", i)] = map[string]any{
			"type":        "string",
			"maxLength":   256,
			"description": fmt.Sprintf("Optional setting number %d; documented only to make this schema large.", i),
		}
	}
	raw, err := json.Marshal(map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	})
	if err != nil {
		panic(err) // maps of strings and ints always marshal
	}
	return raw
}
