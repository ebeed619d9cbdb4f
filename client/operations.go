package client

import (
	"context"
	"errors"

	"github.com/turncli/turncli/internal/canonjson"
)

// MaxListLimit is the largest tools.list page (contract section 5).
const MaxListLimit = 1000

// post sends one operation object.
func post(ctx context.Context, tr *transport, op map[string]any) (*reply, error) {
	body, err := canonjson.Marshal(op)
	if err != nil {
		return nil, invalidf("cannot encode the request: %v", err)
	}
	return tr.post(ctx, body)
}

// asCLIError returns err as a *cliError.
func asCLIError(err error) *cliError {
	var e *cliError
	if errors.As(err, &e) {
		return e
	}
	return &cliError{code: ExitUnavailable, msg: err.Error()}
}

func invalidResponse(format string, args ...any) error {
	return unavailablef("Agent CLI response is invalid: "+format, args...)
}

// ListItem is one item of a tools.list page: a function, or a deferred toolkit whose functions
// are not known until it loads (Function is then empty).
type ListItem struct {
	Toolkit, Function string
	Deferred          bool
}

// listPage reads one tools.list page.
func listPage(ctx context.Context, tr *transport, cursor *string, limit int) (items []ListItem, next *string, err error) {
	op := map[string]any{"operation": "tools.list", "limit": limit}
	if cursor != nil {
		op["cursor"] = *cursor
	}
	r, err := post(ctx, tr, op)
	if err != nil {
		return nil, nil, err
	}
	raw, ok := r.obj["items"].([]any)
	if !ok {
		return nil, nil, invalidResponse("tools.list has no items")
	}
	for _, v := range raw {
		obj, _ := v.(map[string]any)
		toolkit, _ := obj["toolkit"].(string)
		function, _ := obj["function"].(string)
		deferred, _ := obj["deferred"].(bool)
		if toolkit == "" || (function == "") != deferred {
			return nil, nil, invalidResponse("a tools.list item is neither a function nor a deferred toolkit")
		}
		items = append(items, ListItem{Toolkit: toolkit, Function: function, Deferred: deferred})
	}
	switch c := r.obj["next_cursor"].(type) {
	case nil:
	case string:
		next = &c
	default:
		return nil, nil, invalidResponse("tools.list next_cursor is not a string")
	}
	return items, next, nil
}
