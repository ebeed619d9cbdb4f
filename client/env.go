package client

import (
	"net/url"
	"strconv"
	"strings"
)

// Environment variables given to every Bash command of a response (contract section 1).
const (
	envURL    = "MINDROOM_AGENT_CLI_URL"
	envToken  = "MINDROOM_AGENT_CLI_TOKEN"
	envWindow = "MINDROOM_AGENT_CLI_WINDOW"
)

const maxTokenLen = 4096

// endpoint is the validated environment: where to send requests and what to present.
type endpoint struct {
	origin string // scheme://host[:port], no trailing slash
	token  string
	window string // empty when the shell has none
	trace  traceContext
}

// loadEndpoint validates the environment. It is called only when a request is about to be
// sent, so help, completion and input mistakes never depend on it. Messages never contain the
// token.
func loadEndpoint(getenv func(string) string) (*endpoint, error) {
	origin, err := parseOrigin(getenv(envURL))
	if err != nil {
		return nil, err
	}
	token := getenv(envToken)
	if token == "" {
		return nil, unavailable(envToken + " is not set; run mindroom-agent inside an agent's shell")
	}
	if len(token) > maxTokenLen || !visibleASCII(token) {
		return nil, unavailable(envToken + " must be 1 to 4096 printable ASCII characters without whitespace")
	}
	window := getenv(envWindow)
	if window != "" && (len(window) > maxTokenLen || !visibleASCII(window)) {
		return nil, unavailable(envWindow + " must be printable ASCII without whitespace")
	}
	trace := newTraceContext(getenv(envTraceparent), getenv(envTracestate))
	return &endpoint{origin: origin, token: token, window: window, trace: trace}, nil
}

func parseOrigin(raw string) (string, error) {
	if raw == "" {
		return "", unavailable(envURL + " is not set; run mindroom-agent inside an agent's shell")
	}
	bad := func(why string) error {
		return unavailable(envURL + " must be an http or https origin (scheme, host and optional port): " + why)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", bad("it does not parse")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", bad("the scheme is not http or https")
	case u.Opaque != "" || u.Hostname() == "":
		return "", bad("it has no host")
	case u.User != nil:
		return "", bad("it has user info")
	case u.Path != "" && u.Path != "/":
		return "", bad("it has a path")
	case strings.ContainsAny(raw, "?#"):
		return "", bad("it has a query or fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", bad("the port is out of range")
		}
	}
	return u.Scheme + "://" + u.Host, nil
}

func unavailable(why string) *cliError {
	return unavailablef("Agent CLI authority is unavailable: %s", why)
}

// visibleASCII reports whether s is made only of printable ASCII other than space.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
