package client

import (
	"context"
	"net/http"
	"strings"
)

// loadProbe is the function a describe names to load a toolkit whose functions are not known
// yet: the server loads a deferred toolkit before it looks the function up.
const loadProbe = "mindroom-agent-load"

// loadToolkit loads a deferred toolkit by describing a function of it: the server loads the
// toolkit first, then answers with the descriptor or, since loadProbe is not expected to
// exist, with 422 naming the toolkit's functions. Either answer is fine; why is the message of
// a 422, in case the toolkit did not load. Other failures (window ended, 401, transport) are
// errors.
func loadToolkit(ctx context.Context, tr *transport, toolkit string) (why string, err error) {
	_, err = post(ctx, tr, map[string]any{"operation": "tools.describe", "toolkit": toolkit, "function": loadProbe})
	if err == nil {
		return "", nil
	}
	if e := asCLIError(err); e.status == http.StatusUnprocessableEntity {
		return e.msg, nil
	}
	return "", err
}

// maxFunctionsNamed bounds the functions a missing-function message names.
const maxFunctionsNamed = 100

// toolkitOnly returns the toolkit of a describe that names no function: one positional,
// TOOLKIT or TOOLKIT. (splitTool refuses both).
func toolkitOnly(pos []string) (string, bool) {
	if len(pos) != 1 {
		return "", false
	}
	toolkit, function := pos[0], ""
	if i := strings.LastIndex(pos[0], "."); i >= 0 {
		toolkit, function = pos[0][:i], pos[0][i+1:]
	}
	return toolkit, toolkit != "" && function == ""
}

// functionsOf answers `tools describe TOOLKIT`, which names no function: still exit 2 with
// missing (the message naming `mindroom-agent tools search TOOLKIT`), but first it loads the
// toolkit if it is deferred (a describe loads it, as a call would) and reads its functions from
// tools.list, so the message names them and the describe to run next, and the search it names
// shows them. When the environment or the server does not allow that, missing is returned as it
// is, or with why the functions could not be read.
func (a *app) functionsOf(ctx context.Context, toolkit string, missing *cliError) *cliError {
	tr, err := a.connect()
	if err != nil {
		return missing // no Agent CLI here: the usage mistake is the whole answer
	}
	unread := func(err error) *cliError {
		return invalidf("%s; its functions could not be read: %s", missing.msg, asCLIError(err).msg)
	}
	why, err := loadToolkit(ctx, tr, toolkit)
	if err != nil {
		return unread(err)
	}
	names, deferred, err := toolkitFunctions(ctx, tr, toolkit)
	if err != nil {
		return unread(err)
	}
	search := "`mindroom-agent tools search " + shellQuote(toolkit) + "`"
	switch {
	case len(names) > 0:
		list := strings.Join(names, ", ")
		if len(names) == maxFunctionsNamed {
			list += ", …"
		}
		return invalidf("missing function name of toolkit %q, whose functions are %s; describe one with `mindroom-agent tools describe %s`, or run %s to see them with their descriptions",
			toolkit, list, shellQuote(toolkit+"."+names[0]), search)
	case deferred:
		return invalidf("missing function name of toolkit %q, which did not load: %s; run %s to see its functions once it loads", toolkit, why, search)
	case why != "":
		return invalidf("missing function name of toolkit %q: %s; run %s to see its functions", toolkit, why, search)
	}
	return missing
}

// toolkitFunctions reads tools.list until it has passed toolkit's items (a toolkit's items are
// next to each other in catalog order) and returns the names of its functions, at most
// maxFunctionsNamed, and whether it is still listed as deferred.
func toolkitFunctions(ctx context.Context, tr *transport, toolkit string) (names []string, deferred bool, err error) {
	var cursor *string
	for {
		items, next, err := listPage(ctx, tr, cursor, MaxListLimit)
		if err != nil {
			return nil, false, err
		}
		for _, it := range items {
			switch {
			case it.Toolkit != toolkit:
				if len(names) > 0 || deferred {
					return names, deferred, nil
				}
			case it.Deferred:
				deferred = true
			default:
				if names = append(names, it.Function); len(names) == maxFunctionsNamed {
					return names, false, nil
				}
			}
		}
		if next == nil {
			return names, deferred, nil
		}
		cursor = next
	}
}
