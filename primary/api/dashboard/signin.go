package dashboard

import (
	"net/http"
	"strings"

	"google.golang.org/grpc/metadata"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
)

type signinData struct{ Message string }

func (s *Server) signinPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.current(r); ok {
		http.Redirect(w, r, "/ui/inbox", http.StatusSeeOther)
		return
	}
	s.render(&request{w: w, r: r}, http.StatusOK, "signin", "Sign in", signinData{})
}

// signin starts a session for a credential the server accepts (WhoAmI answers for it). A
// session already open in this browser is ended first, so a session id is never reused
// across operators.
//
// The credential is checked before the limit on refused sign-ins is looked at, and only
// refusals count: a credential the server accepts always signs in, even from an address an
// attacker has made too many refused sign-ins from (the same loopback, the same proxy).
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	credential := strings.TrimSpace(r.PostFormValue("credential"))
	q := &request{w: w, r: r}
	if credential == "" {
		s.refuseSignin(q, "Enter your operator credential.")
		return
	}
	ctx := metadata.AppendToOutgoingContext(r.Context(), "authorization", "Bearer "+credential)
	me, err := s.op.WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
	if err != nil {
		if err := faultgrpc.FromStatus(err); !fault.Is(err, fault.Unauthenticated) && !fault.Is(err, fault.PermissionDenied) {
			id := fault.Hide(r.Context(), s.log, err, "dashboard sign-in failed")
			s.render(q, http.StatusServiceUnavailable, "signin", "Sign in",
				signinData{Message: fault.HiddenMessage("The primary could not check the credential; try again", id, fault.PrimaryLog)})
			return
		}
		s.refuseSignin(q, "That credential was not accepted.")
		return
	}
	if old, ok := s.current(r); ok {
		s.sessions.delete(old.id)
	}
	sess := s.sessions.create(credential, me.GetName(), me.GetRole())
	setSessionCookie(w, r, sess.id)
	s.log.Info("dashboard sign-in", "operator", me.GetName())
	http.Redirect(w, r, "/ui/inbox", http.StatusSeeOther)
}

// refuseSignin answers a refused sign-in with msg (401), or, once the browser's address has
// been refused too often, with 429 and the seconds to wait in Retry-After.
func (s *Server) refuseSignin(q *request, msg string) {
	if retry, limited := s.failures.FailHTTP(q.r); limited {
		after := authlimit.RetryAfter(retry)
		q.w.Header().Set("Retry-After", after)
		s.render(q, http.StatusTooManyRequests, "signin", "Sign in",
			signinData{Message: "Too many refused sign-ins from your address; try again in " + after + " s."})
		return
	}
	s.render(q, http.StatusUnauthorized, "signin", "Sign in", signinData{Message: msg})
}

// signout deletes the session on the server, not only the browser's cookie.
func (s *Server) signout(q *request) error {
	s.sessions.delete(q.s.id)
	clearSessionCookie(q.w, q.r)
	http.Redirect(q.w, q.r, "/ui/signin", http.StatusSeeOther)
	return nil
}
