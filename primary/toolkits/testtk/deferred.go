package testtk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/turncli/turncli/primary/catalog"
)

// DeferredName is the selector of the deferred test toolkit.
const DeferredName = "test_deferred"

// maxAddend bounds add's operands to the integers a float64 holds exactly, so the sum always
// fits in an int64.
const maxAddend = 1<<53 - 1

// DeferredToolkit is the deferred "test_deferred" toolkit. It counts calls to Load so tests can
// prove the registry loads a deferred toolkit exactly once, and never for list or search.
type DeferredToolkit struct {
	loads atomic.Int64
}

var _ catalog.Toolkit = (*DeferredToolkit)(nil)

// NewDeferred returns the "test_deferred" toolkit, not yet loaded.
func NewDeferred() *DeferredToolkit {
	return &DeferredToolkit{}
}

// Loads reports how many times Load has been called.
func (d *DeferredToolkit) Loads() int { return int(d.loads.Load()) }

// Name returns "test_deferred".
func (d *DeferredToolkit) Name() string { return DeferredName }

// Description is shown by discovery before the toolkit is loaded.
func (d *DeferredToolkit) Description() string {
	return "Deferred test toolkit: ping and add, loaded on first describe or call."
}

// Deferred reports true.
func (d *DeferredToolkit) Deferred() bool { return true }

// Load counts the call and returns the definition.
func (d *DeferredToolkit) Load(context.Context) (catalog.Definition, error) {
	d.loads.Add(1)
	return catalog.Definition{
		Instructions: []string{"Deferred test toolkit: its functions exist to exercise deferred loading."},
		Functions: []catalog.Function{
			{
				Name:        "ping",
				Description: `Return {"pong": true}.`,
				InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false}`),
			},
			{
				Name:        "add",
				Description: "Return the sum of two integers.",
				InputSchema: json.RawMessage(fmt.Sprintf(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",`+
					`"properties":{"a":{"type":"integer","minimum":%[1]d,"maximum":%[2]d,"description":"First addend."},`+
					`"b":{"type":"integer","minimum":%[1]d,"maximum":%[2]d,"description":"Second addend."}},`+
					`"required":["a","b"],"additionalProperties":false}`, -maxAddend, maxAddend)),
			},
		},
	}, nil
}

// Call runs ping or add.
func (d *DeferredToolkit) Call(_ context.Context, call catalog.Call) (catalog.Result, error) {
	switch call.Function {
	case "ping":
		return catalog.Result{Value: map[string]any{"pong": true}}, nil
	case "add":
		a, err := integer(call.Arguments, "a")
		if err != nil {
			return catalog.Result{}, err
		}
		b, err := integer(call.Arguments, "b")
		if err != nil {
			return catalog.Result{}, err
		}
		if a < -maxAddend || a > maxAddend || b < -maxAddend || b > maxAddend {
			return catalog.Result{}, errors.New("addends must be within ±(2^53-1)")
		}
		return catalog.Result{Value: map[string]any{"sum": a + b}}, nil
	}
	return catalog.Result{}, fmt.Errorf("unknown function %s.%s", DeferredName, call.Function)
}
