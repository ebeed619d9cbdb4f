package authlimit

import (
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// FailHTTP counts a refused credential of an HTTP request against its client's address as the
// listener saw it (RemoteAddr). Forwarding headers are not trusted, so the clients of one
// proxy share its budget, which costs none of them a valid sign-in. A request whose client
// has no IP address is never limited.
func (l *Limiter) FailHTTP(r *http.Request) (retry time.Duration, limited bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return 0, false
	}
	return l.Fail(ap.Addr())
}

// Message is what a client past its limit reads, on every door but the dashboard's (which
// speaks to people).
func Message(retry time.Duration) string {
	return "too many refused credentials from this address; retry in " + RetryAfter(retry) + " s"
}

// RetryAfter is retry as a Retry-After header's value: whole seconds, rounded up, at least one.
func RetryAfter(retry time.Duration) string {
	secs := (retry + time.Second - 1) / time.Second
	return strconv.FormatInt(max(int64(secs), 1), 10)
}
