package testtk

import (
	"encoding/json"

	"github.com/turncli/turncli/primary/catalog"
)

// functions lists the "test" toolkit's functions in catalog order.
func functions() []catalog.Function {
	return []catalog.Function{
		{
			Name:        "echo",
			Description: "Return the arguments object unchanged.",
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":true}`),
		},
		{
			Name:        "sleep",
			Description: "Sleep for the given number of seconds, then report how long.",
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
				`"properties":{"seconds":{"type":"number","minimum":0,"maximum":600,"description":"How long to sleep."}},` +
				`"required":["seconds"],"additionalProperties":false}`),
		},
		{
			Name:        "fail",
			Description: `Fail with the given message (default "test failure").`,
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
				`"properties":{"message":{"type":"string","maxLength":4096,"description":"The failure outcome."}},` +
				`"additionalProperties":false}`),
		},
		{
			Name:        "large",
			Description: `Return a string of the given number of "x" bytes.`,
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
				`"properties":{"bytes":{"type":"integer","minimum":0,"maximum":1048576,"description":"Length of the returned string."}},` +
				`"required":["bytes"],"additionalProperties":false}`),
		},
		{
			Name:        "wait",
			Description: "Report waiting, wait the given number of seconds, then report running and return.",
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
				`"properties":{"seconds":{"type":"number","minimum":0,"maximum":600,"description":"How long to wait."}},` +
				`"required":["seconds"],"additionalProperties":false}`),
		},
		{
			Name:        "gate",
			Description: "Block until the named gate is released (by test.release, or by the test driving the primary).",
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
				`"properties":{"name":{"type":"string","minLength":1,"maxLength":128,"description":"The gate to wait for."}},` +
				`"required":["name"],"additionalProperties":false}`),
		},
		{
			Name:        "release",
			Description: "Release the named gate: test.gate calls blocked on it return, and later ones return at once.",
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
				`"properties":{"name":{"type":"string","minLength":1,"maxLength":128,"description":"The gate to release."}},` +
				`"required":["name"],"additionalProperties":false}`),
		},
		{
			Name:        "media",
			Description: "Return one 1x1 PNG image attachment.",
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false}`),
		},
		{
			Name:        "huge_schema",
			Description: "Accept many documented optional properties; the schema is too large to describe inline.",
			InputSchema: hugeSchema(),
		},
		{
			Name:        "identity",
			Description: "Return the identity the call runs under, taken from the response.",
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false}`),
		},
		{
			Name: "confirm_echo",
			Description: "Return the arguments object unchanged, once a person confirmed the call; " +
				`append a line to the file named by "marker", if given, each time it runs.`,
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
				`"properties":{"marker":{"type":"string","minLength":1,"maxLength":4096,"description":"A file to append a line to."}},` +
				`"additionalProperties":true}`),
			Traits: catalog.Traits{NeedsConfirmation: true},
		},
	}
}
