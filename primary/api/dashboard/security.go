package dashboard

import (
	"net/http"
)

// contentSecurityPolicy allows only the dashboard's own script, style sheet and requests:
// no inline script or style, no framing, no base or form target elsewhere. Even markup that
// slipped through escaping could then run nothing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// secureHeaders sets the headers every dashboard answer carries.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// crossSiteGuard refuses a state-changing request that a browser says came from another
// origin (Sec-Fetch-Site, or else Origin against Host), before any session or form is read.
// The per-session token (csrfField) is checked as well: this guard alone lets requests with
// neither header through, as non-browser clients send them.
func crossSiteGuard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Cross-site request refused.", http.StatusForbidden)
	}))
	return cop.Handler(next)
}

// csrfField is the form field that carries the session's CSRF token; scripts send it as the
// csrfHeader header instead.
const (
	csrfField  = "csrf"
	csrfHeader = "X-CSRF-Token"
)

// sessionCookie names the cookie holding the session id.
const sessionCookie = "turncli_session"

// setSessionCookie gives the browser the session id: never readable by scripts, never sent
// with a request another site started, only to /ui/, and only over TLS when served over TLS.
func setSessionCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/ui/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// clearSessionCookie tells the browser to drop the session id.
func clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/ui/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}
