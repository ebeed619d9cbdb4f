package links

import (
	"context"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/threadfeed"
)

// maxFormBytes bounds a confirming form: one field of a few dozen bytes.
const maxFormBytes = 4 << 10

// Handler serves the links under Prefix on the REST listener, outside its bearer edge: the
// person holds no credential, only the link, whose signature it checks before anything else.
type Handler struct {
	feed  *threadfeed.Feed
	key   Key
	clock clock.Clock
	log   *slog.Logger
	// crossSite refuses a POST a browser says another site started.
	crossSite *http.CrossOriginProtection
}

// NewHandler returns the handler of the links key signs.
func NewHandler(feed *threadfeed.Feed, key Key, clk clock.Clock, log *slog.Logger) *Handler {
	h := &Handler{feed: feed, key: key, clock: clk, log: log, crossSite: http.NewCrossOriginProtection()}
	h.crossSite.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write(w, http.StatusForbidden, page{Heading: "Refused", Message: "A request started by another site cannot use this link."})
	}))
	return h
}

// ServeHTTP shows a link's page on GET (deciding nothing) and takes its decision on the POST
// of that page's form.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, _ := strings.CutPrefix(r.URL.Path, Prefix)
	c, err := h.key.verify(token)
	if err != nil {
		write(w, http.StatusNotFound, page{Heading: "Not valid", Message: "This link is not valid."})
		return
	}
	if !h.clock.Now().Before(c.expiry()) {
		write(w, http.StatusGone, page{Heading: "Expired", Message: "This link has expired. Ask for a new one if the item is still open."})
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.show(w, r, token, c)
	case http.MethodPost:
		h.crossSite.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.decide(w, r, token, c) })).ServeHTTP(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		write(w, http.StatusMethodNotAllowed, page{Heading: "Not allowed", Message: "Open this link in a browser."})
	}
}

// show is the page of a valid link: the item as it stands and the button that confirms the
// decision, or why the decision cannot be taken.
func (h *Handler) show(w http.ResponseWriter, r *http.Request, token string, c claims) {
	it, allowed, err := h.feed.Choices(r.Context(), c.identity(), c.Item)
	if err == nil && !slices.Contains(allowed, threadfeed.Action(c.Decision)) {
		err = fault.Newf(fault.PermissionDenied, "the %s account %q may not %s %s now", c.Surface, c.User, c.Decision, c.Item)
	}
	if err != nil {
		h.refuse(r.Context(), w, c, err)
		return
	}
	write(w, http.StatusOK, page{
		Heading: "Confirm " + c.Decision, Title: it.Title, Text: it.Text,
		Confirm: true, Decision: c.Decision, Account: c.User, Surface: c.Surface,
		Expires: c.expiry().Format(time.RFC1123), ConfirmName: confirmField, ConfirmTo: h.key.confirmation(token),
	})
}

// decide relays the link's decision as its account, once the page's form confirmed it. The
// page showed the item's whole text, so nothing was seen cut short.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request, token string, c claims) {
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/x-www-form-urlencoded" {
		write(w, http.StatusBadRequest, page{Heading: "Bad request", Message: "Confirm the decision with the button on this link's page."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil || !h.key.confirms(token, r.PostForm.Get(confirmField)) {
		write(w, http.StatusBadRequest, page{Heading: "Bad request", Message: "Confirm the decision with the button on this link's page."})
		return
	}
	it, err := h.feed.Decide(r.Context(), c.identity(), c.Item, threadfeed.Action(c.Decision), "", threadfeed.Seen{FullText: true})
	if err != nil {
		h.refuse(r.Context(), w, c, err)
		return
	}
	h.log.Info("thread item decided by link", "item", it.Key, "decision", c.Decision, "surface", c.Surface, "chat_user_id", c.User)
	write(w, http.StatusOK, page{Heading: "Done", Message: "Your decision (" + c.Decision + ") was taken.", Title: it.Title})
}

// refuse shows why the link's decision cannot be taken, with the status that says so.
func (h *Handler) refuse(ctx context.Context, w http.ResponseWriter, c claims, err error) {
	kind, msg, _ := fault.Public(err)
	switch kind {
	case fault.Conflict:
		write(w, http.StatusConflict, page{Heading: "Already decided", Message: msg})
	case fault.PermissionDenied, fault.FailedPrecondition:
		write(w, http.StatusForbidden, page{Heading: "Not allowed", Message: msg})
	case fault.NotFound:
		write(w, http.StatusNotFound, page{Heading: "Not valid", Message: "This link is not valid."})
	case fault.InvalidArgument:
		write(w, http.StatusBadRequest, page{Heading: "Bad request", Message: msg})
	default:
		id := fault.Hide(ctx, h.log, err, "decision link failed", "item", c.Item)
		write(w, http.StatusInternalServerError, page{Heading: "Failed",
			Message: fault.HiddenMessage("the decision could not be taken now; try again", id, fault.PrimaryLog)})
	}
}
