package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/turncli/turncli/internal/canonjson"
)

// runToolsCall submits one call and waits for it. Its call id is chosen before anything else
// (before the input is read) so that every error it prints names the id to retry with.
func runToolsCall(ctx context.Context, a *app, p *parsedArgs, parseErr error) (*result, error) {
	callID, err := newCallID(a.random)
	if err != nil {
		return nil, unavailablef("cannot choose a call id: %v", err)
	}
	if v, ok := p.value("call-id"); ok {
		if _, valid := parseUUID(v); !valid {
			return nil, invalidf("option --call-id must be a UUID, not %q", v)
		}
		callID = v // sent as given; the server accepts any spelling
	}
	res, err := a.call(ctx, callID, p, parseErr)
	if err != nil {
		return nil, withCallID(err, callID)
	}
	return res, nil
}

func (a *app) call(ctx context.Context, callID string, p *parsedArgs, parseErr error) (*result, error) {
	if parseErr != nil {
		return nil, parseErr
	}
	timeout, err := timeoutOption(p)
	if err != nil {
		return nil, err
	}
	toolkit, function, trailing, err := splitTool(p.positionals, true)
	if err != nil {
		return nil, err
	}
	args, err := readCallInput(p, trailing, a.stdin)
	if err != nil {
		return nil, err
	}
	body, err := canonjson.Marshal(map[string]any{
		"operation": "tools.call",
		"call_id":   callID,
		"toolkit":   toolkit,
		"function":  function,
		"arguments": args,
	})
	if err != nil {
		return nil, invalidf("cannot encode the request: %v", err)
	}
	tr, err := a.connect()
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	r, err := tr.post(ctx, body)
	if err != nil {
		var e *cliError
		if errors.As(err, &e) && e.code == ExitUnavailable && e.status != http.StatusUnauthorized {
			e.msg += fmt.Sprintf("; the call may have been submitted: retry with --call-id %s, never a new id", callID)
		}
		return nil, err
	}
	canonical, _ := parseUUID(callID)
	return a.settle(ctx, tr, canonical, r, deadline, timeout)
}

// splitTool reads TOOLKIT FUNCTION or TOOLKIT.FUNCTION (split on the last dot) from the
// positionals. With withInput, one more positional is the trailing JSON input, returned as
// rest: see trailingJSON for how two positionals are read.
func splitTool(pos []string, withInput bool) (toolkit, function string, rest []string, err error) {
	switch {
	case len(pos) == 0:
		return "", "", nil, invalidf("missing TOOLKIT FUNCTION or TOOLKIT.FUNCTION; run `mindroom-agent tools search QUERY` to find one")
	case len(pos) == 1 || (withInput && len(pos) == 2 && trailingJSON(pos[0], pos[1])):
		i := strings.LastIndex(pos[0], ".")
		if i < 0 {
			toolkit, function = pos[0], ""
		} else {
			toolkit, function = pos[0][:i], pos[0][i+1:]
		}
		rest = pos[1:]
	default:
		toolkit, function, rest = pos[0], pos[1], pos[2:]
	}
	switch {
	case toolkit == "":
		return "", "", nil, invalidf("missing toolkit name; run `mindroom-agent tools search QUERY` to find one")
	case function == "":
		return "", "", nil, invalidf("missing function name of toolkit %q; run `mindroom-agent tools search %s` to see its functions",
			toolkit, shellQuote(toolkit))
	case len(rest) > 1:
		return "", "", nil, invalidf("too many arguments: give the call input as one JSON argument")
	}
	return toolkit, function, rest, nil
}

// looksLikeJSON reports whether a positional is meant as a JSON value rather than a name.
func looksLikeJSON(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	if t == "" {
		return true
	}
	switch t {
	case "true", "false", "null":
		return true
	}
	return strings.ContainsRune("{[\"-0123456789", rune(t[0]))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/:@+=,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return fmt.Sprintf("'%s'", strings.ReplaceAll(s, "'", `'\''`))
}

// trailingJSON decides how `tools call A B` reads: TOOLKIT.FUNCTION JSON when B is an object,
// or when A has a dot and B looks like any JSON value; otherwise TOOLKIT FUNCTION, so
// `tools call github 2fa_setup` names a function that merely starts with a digit, and
// `tools call slack {}` is reported as a missing function rather than a function named "{}".
func trailingJSON(first, second string) bool {
	if strings.HasPrefix(strings.TrimSpace(second), "{") {
		return true
	}
	return strings.Contains(first, ".") && looksLikeJSON(second)
}
