package client

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/turncli/turncli/internal/canonjson"
)

const defaultTimeout = 30 * time.Second

// runFunc runs a command on its parsed arguments. parseErr is the first mistake parseArgs
// found; most commands just return it (see plain), tools call first attaches its call id.
type runFunc func(ctx context.Context, a *app, p *parsedArgs, parseErr error) (*result, error)

func plain(f func(context.Context, *app, *parsedArgs) (*result, error)) runFunc {
	return func(ctx context.Context, a *app, p *parsedArgs, parseErr error) (*result, error) {
		if parseErr != nil {
			return nil, parseErr
		}
		return f(ctx, a, p)
	}
}

func runToolsList(ctx context.Context, a *app, p *parsedArgs) (*result, error) {
	return a.page(ctx, "tools list", "tools.list", p)
}

func runContextList(ctx context.Context, a *app, p *parsedArgs) (*result, error) {
	return a.page(ctx, "context list", "context.list", p)
}

// page runs a listing operation: optional cursor and limit, no positionals.
func (a *app) page(ctx context.Context, name, op string, p *parsedArgs) (*result, error) {
	if len(p.positionals) > 0 {
		return nil, invalidf("%s takes no arguments, got %q", name, p.positionals[0])
	}
	body := map[string]any{"operation": op}
	if c, ok := p.value("cursor"); ok {
		body["cursor"] = c
	}
	if err := intOption(p, body, "limit"); err != nil {
		return nil, err
	}
	return a.discover(ctx, body)
}

func runToolsSearch(ctx context.Context, a *app, p *parsedArgs) (*result, error) {
	query := strings.Join(p.positionals, " ")
	if strings.TrimSpace(query) == "" {
		return nil, invalidf("tools search needs a QUERY")
	}
	body := map[string]any{"operation": "tools.search", "query": query}
	if t, ok := p.value("toolkit"); ok {
		body["toolkit"] = t
	}
	if err := intOption(p, body, "limit"); err != nil {
		return nil, err
	}
	return a.discover(ctx, body)
}

func runToolsDescribe(ctx context.Context, a *app, p *parsedArgs) (*result, error) {
	if len(p.positionals) > 2 {
		return nil, invalidf("tools describe takes TOOLKIT FUNCTION or TOOLKIT.FUNCTION, got %d arguments", len(p.positionals))
	}
	toolkit, function, _, err := splitTool(p.positionals, false)
	if err != nil {
		var missing *cliError
		if tk, ok := toolkitOnly(p.positionals); ok && errors.As(err, &missing) {
			return nil, a.functionsOf(ctx, tk, missing)
		}
		return nil, err
	}
	return a.discover(ctx, map[string]any{"operation": "tools.describe", "toolkit": toolkit, "function": function})
}

func runContextRead(ctx context.Context, a *app, p *parsedArgs) (*result, error) {
	if len(p.positionals) != 1 || p.positionals[0] == "" {
		return nil, invalidf("context read takes exactly one NAME")
	}
	body := map[string]any{"operation": "context.read", "name": p.positionals[0]}
	for _, name := range []string{"offset", "limit"} {
		if err := intOption(p, body, name); err != nil {
			return nil, err
		}
	}
	return a.discover(ctx, body)
}

// intOption copies integer option name into body when the user gave it.
func intOption(p *parsedArgs, body map[string]any, name string) error {
	s, ok := p.value(name)
	if !ok {
		return nil
	}
	n, err := parseInt(name, s)
	if err != nil {
		return err
	}
	body[name] = canonjson.Number(strconv.FormatInt(n, 10))
	return nil
}

// discover sends an operation whose result has no status and prints it.
func (a *app) discover(ctx context.Context, body map[string]any) (*result, error) {
	data, err := canonjson.Marshal(body)
	if err != nil {
		return nil, invalidf("cannot encode the request: %v", err)
	}
	tr, err := a.connect()
	if err != nil {
		return nil, err
	}
	r, err := tr.post(ctx, data)
	if err != nil {
		return nil, err
	}
	return &result{out: r.canon, code: ExitCompleted}, nil
}

func runCallsGet(ctx context.Context, a *app, p *parsedArgs) (*result, error) {
	id, canonical, err := callIDArg("calls get", p)
	if err != nil {
		return nil, err
	}
	tr, err := a.connect()
	if err != nil {
		return nil, withCallID(err, id)
	}
	r, err := tr.get(ctx, canonical, 0)
	if err != nil {
		return nil, withCallID(err, id)
	}
	res, err := receiptResult(r)
	if err != nil {
		return nil, withCallID(err, id)
	}
	return res, nil
}

func runCallsWait(ctx context.Context, a *app, p *parsedArgs) (*result, error) {
	id, canonical, err := callIDArg("calls wait", p)
	if err != nil {
		return nil, err
	}
	timeout, err := timeoutOption(p)
	if err != nil {
		return nil, withCallID(err, id)
	}
	tr, err := a.connect()
	if err != nil {
		return nil, withCallID(err, id)
	}
	deadline := time.Now().Add(timeout)
	r, err := tr.get(ctx, canonical, 0)
	if err != nil {
		return nil, withCallID(err, id)
	}
	res, err := a.settle(ctx, tr, canonical, r, deadline, timeout)
	if err != nil {
		return nil, withCallID(err, id)
	}
	return res, nil
}

// callIDArg returns the CALL_ID positional as given and in canonical form.
func callIDArg(name string, p *parsedArgs) (given, canonical string, err error) {
	if len(p.positionals) != 1 {
		return "", "", invalidf("%s takes exactly one CALL_ID", name)
	}
	given = p.positionals[0]
	canonical, ok := parseUUID(given)
	if !ok {
		return "", "", invalidf("CALL_ID must be a UUID, not %q", given)
	}
	return given, canonical, nil
}

func timeoutOption(p *parsedArgs) (time.Duration, error) {
	s, ok := p.value("timeout")
	if !ok {
		return defaultTimeout, nil
	}
	return parseTimeout(s)
}
