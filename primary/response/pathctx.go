package response

import "context"

type pathKey struct{}

// WithPath records on ctx the way an Agent CLI request reached the primary: the loopback
// listener (LocalPath) or the worker whose proxy forwarded it. Whoever authenticated that
// way marks the context (the Agent CLI API for its listener, the worker hub for a worker's
// forwarded calls); a request with no path is refused.
func WithPath(ctx context.Context, p Path) context.Context {
	return context.WithValue(ctx, pathKey{}, p)
}

// PathFrom returns the path WithPath recorded on ctx.
func PathFrom(ctx context.Context) (Path, bool) {
	p, ok := ctx.Value(pathKey{}).(Path)
	return p, ok
}
