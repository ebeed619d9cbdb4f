package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	"github.com/turncli/turncli/internal/fault"
)

// Every template escapes what it shows: nothing here returns template.HTML of a text an agent,
// a tool or a job produced (the one HTML-producing path for job output is renderANSI, which
// escapes first).

// views are the pages: each is layout.html plus its own file, which defines "content" and
// the fragments the page's script fetches again.
var views = []string{"signin", "error", "inbox", "questions", "question", "jobs", "job", "responses", "workers", "conversations"}

// navItem is one entry of the navigation.
type navItem struct{ Path, Label string }

var nav = []navItem{{"/ui/inbox", "Inbox"}, {"/ui/questions", "Questions"}, {"/ui/jobs", "Jobs"},
	{"/ui/responses", "Responses"}, {"/ui/workers", "Workers"}, {"/ui/conversations", "Conversations"}}

func parsePages(now func() time.Time) (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"conv":     conversation,
		"when":     func(ts *timestamppb.Timestamp) string { return formatTime(ts) },
		"iso":      func(ts *timestamppb.Timestamp) string { return isoTime(ts) },
		"timeLeft": func(ts *timestamppb.Timestamp) string { return timeLeft(now(), ts) },
		"runtime":  formatDuration,
		"json":     prettyJSON,
		"short":    shortEnum,
		"shortID":  shortID,
		"subject":  readableSubject,
		"jobBadge": jobBadge,
		"jobRan":   jobRan,
		// The choices of the Conversations view's selects, in the order they are offered.
		"modeChoices":  func() []string { return []string{"ask", "auto", "admin"} },
		"shellChoices": func() []string { return []string{"standard", "minimal"} },
	}
	pages := map[string]*template.Template{}
	for _, v := range views {
		t, err := template.New(v).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+v+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard template %s: %w", v, err)
		}
		pages[v] = t
	}
	return pages, nil
}

// pageData is what the layout shows around every page's content.
type pageData struct {
	Title  string
	Active string // the navigation entry's path
	Nav    []navItem
	Name   string
	Admin  bool
	CSRF   string
	Flash  string
	Body   any
}

// render writes a whole page (the layout around view's content).
func (s *Server) render(q *request, code int, view, title string, body any) {
	d := pageData{Title: title, Body: body}
	if q.s != nil {
		d.Nav, d.Name, d.Admin, d.CSRF, d.Flash = nav, q.s.name, q.s.admin(), q.s.csrf, s.sessions.takeFlash(q.s)
		d.Active = "/ui/" + view
		if view == "question" || view == "job" {
			d.Active += "s"
		}
	}
	s.execute(q.r.Context(), q.w, code, view, "layout", d)
}

// fragment writes one named fragment of view's templates, as the page's script fetches it.
func (s *Server) fragment(q *request, view, name string, body any) {
	s.execute(q.r.Context(), q.w, http.StatusOK, view, name, pageData{Name: q.s.name, Admin: q.s.admin(), CSRF: q.s.csrf, Body: body})
}

func (s *Server) execute(ctx context.Context, w http.ResponseWriter, code int, view, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages[view].ExecuteTemplate(&buf, name, data); err != nil {
		id := fault.Hide(ctx, s.log, err, "dashboard template failed", "view", view, "template", name)
		http.Error(w, somethingWentWrong(id), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// pageOf is the handler of view's whole page, titled title, over what load reads.
func pageOf[T any](s *Server, view, title string, load func(*request) (T, error)) func(*request) error {
	return func(q *request) error {
		d, err := load(q)
		if err != nil {
			return err
		}
		s.render(q, http.StatusOK, view, title, d)
		return nil
	}
}

// fragmentOf is the handler of one fragment of view, which the page's script fetches again,
// over the same load as its page.
func fragmentOf[T any](s *Server, view, name string, load func(*request) (T, error)) func(*request) error {
	return func(q *request) error {
		d, err := load(q)
		if err != nil {
			return err
		}
		s.fragment(q, view, name, d)
		return nil
	}
}

// redirect answers a change with the page to show next, and a message for it.
func (s *Server) redirect(q *request, path, flash string) error {
	if flash != "" {
		s.sessions.setFlash(q.s, flash)
	}
	http.Redirect(q.w, q.r, path, http.StatusSeeOther)
	return nil
}

func conversation(c *conversationv1.Conversation) string {
	if c.GetThread() == "" {
		return c.GetChannel()
	}
	return c.GetChannel() + " / " + c.GetThread()
}

func formatTime(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format("2006-01-02 15:04:05 UTC")
}

func isoTime(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format(time.RFC3339)
}

// timeLeft says how long until the deadline, to the second; the page's script counts down
// from the same deadline.
func timeLeft(now time.Time, deadline *timestamppb.Timestamp) string {
	if deadline == nil {
		return "no deadline"
	}
	left := deadline.AsTime().Sub(now).Round(time.Second)
	if left <= 0 {
		return "expiring"
	}
	return left.String() + " left"
}

func formatDuration(d *durationpb.Duration) string {
	if d == nil {
		return ""
	}
	return d.AsDuration().Round(time.Second).String()
}

// prettyJSON indents a JSON text for reading; text that is not JSON is shown as it is.
func prettyJSON(s string) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(s), "", "  "); err != nil {
		return s
	}
	return buf.String()
}

// readableSubject is an audit subject as a person reads it: the store escapes each segment
// of a subject as a URL path segment (store.ConversationSubject), so "conversation/%21room/%24t"
// reads "conversation/!room/$t". A slash inside a segment stays escaped (%2F): decoded, a
// channel "prod/ops" would read like channel "prod" with thread "ops", and an admin could be
// led to pin an entry on the wrong conversation. A segment that is not valid escaping is
// shown as it is. The result is still the agent's or runtime's text: the template escapes it.
func readableSubject(subject string) string {
	segments := strings.Split(subject, "/")
	for i, seg := range segments {
		if plain, err := url.PathUnescape(seg); err == nil {
			segments[i] = strings.ReplaceAll(plain, "/", "%2F")
		}
	}
	return strings.Join(segments, "/")
}

// idShownChars is how much of a long id a table shows: a UUID's first group, enough to tell
// the rows apart; the whole id is in the cell's title.
const idShownChars = 8

// shortID shortens an id for a table cell: ids longer than a UUID's first group and its dash
// and a few more show their first idShownChars characters and an ellipsis.
func shortID(id string) string {
	r := []rune(id)
	if len(r) <= idShownChars+4 {
		return id
	}
	return string(r[:idShownChars]) + "…"
}

// shortEnum turns an enum value's name into a word: JOB_STATUS_RUNNING → running.
func shortEnum(v fmt.Stringer) string {
	name := v.String()
	for _, prefix := range []string{"JOB_STATUS_", "JOB_KIND_", "APPROVAL_STATUS_", "PROMPT_STATUS_", "PROMPT_KIND_",
		"QUESTION_STATUS_", "CALL_APPROVAL_STATUS_", "DECISION_", "CALL_STATUS_", "SHELL_MODE_", "MODE_", "PERMISSION_SCOPE_",
		"WINDOW_STATE_", "RESPONSE_ORIGIN_"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			return strings.ReplaceAll(strings.ToLower(rest), "_", " ")
		}
	}
	return strings.ToLower(name)
}
