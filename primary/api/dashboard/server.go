package dashboard

import (
	"context"
	"crypto/sha256"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/metadata"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
)

// Prefix is where the dashboard is mounted on the REST listener.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// maxFormBody bounds a form post: answers and comments are a few KiB at most.
const maxFormBody = 256 << 10

// Server is the dashboard: its sessions and its pages, over an OperatorService client.
type Server struct {
	cfg      Config
	op       operatorv1.OperatorServiceClient
	failures *authlimit.Limiter
	sessions *sessions
	pages    map[string]*template.Template
	log      *slog.Logger
}

// New builds the dashboard; it serves nothing until its Handler is mounted.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	pages, err := parsePages(cfg.Now)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, op: cfg.Operator, failures: cfg.Failures, sessions: newSessions(cfg), pages: pages, log: cfg.Logger}, nil
}

// EndSessions ends every session signed in with the credential whose SHA-256 digest is
// digest, and stops the requests they are serving (event streams and log follows end at
// once). The primary calls it when the credential stops being valid: its operator was
// removed.
func (s *Server) EndSessions(digest [sha256.Size]byte) {
	if name, n := s.sessions.endCredential(digest); n > 0 {
		s.log.Info("dashboard sessions ended: credential revoked", "operator", name, "sessions", n)
	}
}

// Handler serves every path under Prefix.
func (s *Server) Handler() http.Handler {
	static, _ := fs.Sub(staticFS, "static")
	mux := http.NewServeMux()
	mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /ui/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/inbox", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /ui/signin", s.signinPage)
	mux.HandleFunc("POST /ui/signin", s.signin)
	mux.Handle("POST /ui/signout", s.change(s.signout))

	mux.Handle("GET /ui/inbox", s.page(pageOf(s, "inbox", "Inbox", s.loadInbox)))
	mux.Handle("GET /ui/inbox/items", s.page(fragmentOf(s, "inbox", "inbox-items", s.loadInbox)))
	mux.Handle("POST /ui/approvals/{id}/decide", s.change(s.decide("approval", s.decideApproval)))
	mux.Handle("POST /ui/prompts/{id}/decide", s.change(s.decide("prompt", s.decidePrompt)))
	mux.Handle("POST /ui/call-approvals/{id}/decide", s.change(s.decide("call-approval", s.decideCallApproval)))

	mux.Handle("GET /ui/questions", s.page(pageOf(s, "questions", "Questions", s.listQuestions)))
	mux.Handle("GET /ui/questions/items", s.page(fragmentOf(s, "questions", "question-items", s.listQuestions)))
	mux.Handle("GET /ui/questions/{id}", s.page(s.question))
	mux.Handle("POST /ui/questions/{id}/answers", s.change(s.answerQuestion))

	mux.Handle("GET /ui/jobs", s.page(pageOf(s, "jobs", "Jobs", s.loadJobs)))
	mux.Handle("GET /ui/jobs/items", s.page(fragmentOf(s, "jobs", "job-items", s.loadJobs)))
	mux.Handle("GET /ui/jobs/{id}", s.page(s.job))
	mux.Handle("GET /ui/jobs/{id}/summary", s.page(fragmentOf(s, "job", "job-summary", s.loadJob)))
	mux.Handle("GET /ui/jobs/{id}/log", s.page(s.jobLog))
	mux.Handle("POST /ui/jobs/{id}/cancel", s.change(s.cancelJob))

	mux.Handle("GET /ui/responses", s.page(pageOf(s, "responses", "Responses", s.loadResponses)))
	mux.Handle("GET /ui/responses/items", s.page(fragmentOf(s, "responses", "response-items", s.loadResponses)))
	mux.Handle("GET /ui/workers", s.page(pageOf(s, "workers", "Workers", s.loadWorkers)))
	mux.Handle("GET /ui/workers/items", s.page(fragmentOf(s, "workers", "worker-items", s.loadWorkers)))
	mux.Handle("GET /ui/conversations", s.page(pageOf(s, "conversations", "Conversations", s.loadConversations)))
	mux.Handle("GET /ui/conversations/items", s.page(fragmentOf(s, "conversations", "conversation-items", s.loadConversations)))
	mux.Handle("POST /ui/conversations/mode", s.change(s.setConversationMode))
	mux.Handle("POST /ui/conversations/shell", s.change(s.setShellMode))
	mux.Handle("POST /ui/allowances/revoke", s.change(s.revokeAllowance))

	mux.Handle("GET /ui/events", s.page(s.events))
	return secureHeaders(crossSiteGuard(mux))
}

// request is one signed-in request: ctx carries the operator's credential to OperatorService.
type request struct {
	w   http.ResponseWriter
	r   *http.Request
	s   *session
	ctx context.Context
}

// fragment reports whether the page's script asked (it wants bare status codes, not pages).
func (q *request) fragment() bool { return q.r.Header.Get("X-Requested-With") == "fetch" }

func (q *request) id() (uint64, error) {
	id, err := strconv.ParseUint(q.r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, fault.New(fault.NotFound, "no such record")
	}
	return id, nil
}

// page wraps a handler that needs a signed-in operator.
func (s *Server) page(h func(*request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, ok := s.current(r)
		if !ok {
			s.signedOut(w, r)
			return
		}
		// The request stops when its session ends, whatever ends it.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(sess.ended, cancel)()
		q := &request{w: w, r: r, s: sess, ctx: metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+sess.credential)}
		s.finish(q, h(q))
	})
}

// change wraps a handler that changes something: besides the session, the request must carry
// the session's CSRF token (the cross-site guard has already refused what a browser marked
// as coming from elsewhere).
func (s *Server) change(h func(*request) error) http.Handler {
	return s.page(func(q *request) error {
		q.r.Body = http.MaxBytesReader(q.w, q.r.Body, maxFormBody)
		token := q.r.Header.Get(csrfHeader)
		if token == "" {
			token = q.r.PostFormValue(csrfField)
		}
		if !q.s.checkCSRF(token) {
			return errCSRF
		}
		return h(q)
	})
}

var errCSRF = errors.New("this form has expired; reload the page and try again")

// current is the session the request's cookie names, if it is live.
func (s *Server) current(r *http.Request) (*session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, false
	}
	return s.sessions.get(c.Value)
}

func (s *Server) signedOut(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Requested-With") == "fetch" || r.Method != http.MethodGet {
		http.Error(w, "Sign in first.", http.StatusUnauthorized)
		return
	}
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}

// finish answers a handler's error: the server's own status and message (it decided), or a
// sign-in when it no longer accepts the credential.
func (s *Server) finish(q *request, err error) {
	if err == nil {
		return
	}
	var code int
	var msg string
	err = faultgrpc.FromStatus(err)
	kind, isFault := fault.KindOf(err)
	switch {
	case errors.Is(err, errCSRF):
		code, msg = http.StatusForbidden, err.Error()
	case isFault && kind == fault.Unauthenticated:
		s.sessions.delete(q.s.id)
		clearSessionCookie(q.w, q.r)
		s.signedOut(q.w, q.r)
		return
	case isFault:
		// The server's own decision, answered as its REST API would.
		code, msg = runtime.HTTPStatusFromCode(faultgrpc.Code(kind)), err.Error()
	default:
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			code, msg = http.StatusRequestEntityTooLarge, "The form is too large."
			break
		}
		id := fault.Hide(q.r.Context(), s.log, err, "dashboard request failed", "path", q.r.URL.Path)
		code, msg = http.StatusInternalServerError, somethingWentWrong(id)
	}
	if q.fragment() {
		http.Error(q.w, msg, code)
		return
	}
	s.render(q, code, "error", "error", errorData{Message: msg, Code: code})
}

// somethingWentWrong is what a person reads of a fault Hide logged as id.
func somethingWentWrong(id string) string {
	return fault.HiddenMessage("Something went wrong on the server", id, fault.PrimaryLog)
}

type errorData struct {
	Message string
	Code    int
}
