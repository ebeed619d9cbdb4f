package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	goslack "github.com/slack-go/slack"
)

// Decider decides a person's Answer: whether they may answer, whether the card's version is
// current, and what it does. Its reply, if any, is shown to that person alone; an error is a
// refusal whose text is shown to them alone. Both are shown as plain text.
type Decider func(ctx context.Context, a Answer) (reply string, err error)

// FormOpener returns the current card of the question item a person pressed Answer on (the
// Answer says who and which version they saw), so the form opens with its latest revision. An
// error refuses, and its text is shown to that person alone. It runs while Slack waits for the
// modal, so it must be quick (a store read).
type FormOpener func(ctx context.Context, a Answer) (Card, error)

// HandlerConfig is what the interactivity endpoint needs.
type HandlerConfig struct {
	// SigningSecret is the Slack app's signing secret.
	SigningSecret string
	Decide        Decider
	OpenForm      FormOpener
	// QueueSize bounds the answers waiting for Decide; past it people are asked to try again.
	QueueSize int
	Logger    *slog.Logger
}

// Validate reports a missing field.
func (c HandlerConfig) Validate() error {
	switch {
	case c.SigningSecret == "":
		return errors.New("slack: no signing secret")
	case c.Decide == nil || c.OpenForm == nil:
		return errors.New("slack: no Decide or OpenForm")
	case c.QueueSize < 1:
		return fmt.Errorf("slack: queue size %d, want at least 1", c.QueueSize)
	case c.Logger == nil:
		return errors.New("slack: no logger")
	}
	return nil
}

// The texts this package shows a person on its own account.
const (
	// BusyText answers a gesture that found the queue of answers full.
	BusyText = "turncli is busy; try again in a moment."
	// FormFailedText answers an Answer button whose modal Slack did not open.
	FormFailedText = "The form could not be opened; try again."
	// NoFormText answers an Answer button on an item that has no questions.
	NoFormText = "This item has no form to answer."
)

const (
	// maxBody bounds an interaction request; Slack's payloads are a few KiB.
	maxBody = 1 << 20
	// modalBudget is how long OpenForm and views.open may take together: Slack wants the
	// request acknowledged within 3 s and the trigger id is short-lived.
	modalBudget = 2500 * time.Millisecond
	// noticeTimeout bounds an ephemeral message posted after the request was acknowledged.
	noticeTimeout = 10 * time.Second
)

// Handler serves Slack's interactivity requests: button clicks (block_actions) and modal
// submissions (view_submission). It refuses unsigned, stale and replayed requests with 401,
// acknowledges the rest at once and hands their Answers to Decide through a bounded queue that
// Run drains. A replayed request is refused rather than ignored with 200, so a replay shows up as
// an error where requests are monitored; Slack never repeats an interaction, so no genuine
// request is refused.
type Handler struct {
	cfg     HandlerConfig
	client  *Client
	log     *slog.Logger
	replays *replayGuard
	queue   chan Answer
}

// NewHandler builds the endpoint; client posts its modals and ephemeral messages.
func NewHandler(client *Client, cfg HandlerConfig) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handler{
		cfg:    cfg,
		client: client,
		log:    cfg.Logger.With("component", "slack-interactions"),
		// time.Now, because slack-go's verifier judges the timestamp by it too.
		replays: newReplayGuard(maxRemembered, time.Now),
		queue:   make(chan Answer, cfg.QueueSize),
	}, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "unreadable request body", http.StatusBadRequest)
		return
	}
	if status, reason := verify(r.Header, body, h.cfg.SigningSecret, h.replays); reason != "" {
		h.log.Info("slack request refused", "reason", reason)
		http.Error(w, reason, status)
		return
	}
	ic, err := parseInteraction(body)
	if err != nil {
		http.Error(w, "malformed interaction payload", http.StatusBadRequest)
		return
	}
	switch ic.Type {
	case goslack.InteractionTypeBlockActions:
		h.onButton(w, r, ic)
	case goslack.InteractionTypeViewSubmission:
		h.onSubmission(w, r, ic)
	default:
		acknowledge(w)
	}
}

// parseInteraction reads the form field "payload" of an already verified body.
func parseInteraction(body []byte) (goslack.InteractionCallback, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return goslack.InteractionCallback{}, err
	}
	var ic goslack.InteractionCallback
	err = json.Unmarshal([]byte(form.Get("payload")), &ic)
	return ic, err
}

// onButton turns a click on one of this package's buttons into an Answer. Answer and Comment
// open a modal; the others go to Decide. Clicks on other apps' elements are acknowledged only.
func (h *Handler) onButton(w http.ResponseWriter, r *http.Request, ic goslack.InteractionCallback) {
	if len(ic.ActionCallback.BlockActions) == 0 {
		acknowledge(w)
		return
	}
	act := ic.ActionCallback.BlockActions[0]
	name, ours := strings.CutPrefix(act.ActionID, actionPrefix)
	item, err := parseRef(act.Value)
	if _, known := buttonLabels[Action(name)]; !ours || !known || err != nil {
		acknowledge(w)
		return
	}
	a := Answer{
		ItemKey: item.ItemKey, Version: item.Version,
		UserID: ic.User.ID, TeamID: cmp.Or(ic.Team.ID, ic.User.TeamID),
		Channel: cmp.Or(ic.Channel.ID, ic.Container.ChannelID), MessageTS: cmp.Or(ic.Container.MessageTs, ic.Message.Timestamp),
		Decision: Action(name), Gesture: GestureButton,
	}
	switch a.Decision {
	case ActionAnswer:
		h.openForm(w, r, ic.TriggerID, a)
	case ActionComment:
		state := modalState{ItemKey: a.ItemKey, Version: a.Version, Channel: a.Channel, MessageTS: a.MessageTS}
		h.openModal(w, r, ic.TriggerID, a, func(context.Context) (goslack.ModalViewRequest, string, error) {
			m, err := commentModal(state)
			return m, "", err
		})
	default:
		if h.enqueue(a) {
			acknowledge(w)
			return
		}
		acknowledge(w)
		h.notify(r.Context(), a, BusyText)
	}
}

// openForm opens the question form of the item the person pressed Answer on.
func (h *Handler) openForm(w http.ResponseWriter, r *http.Request, trigger string, a Answer) {
	h.openModal(w, r, trigger, a, func(ctx context.Context) (goslack.ModalViewRequest, string, error) {
		card, err := h.cfg.OpenForm(ctx, a)
		if err != nil {
			return goslack.ModalViewRequest{}, err.Error(), err
		}
		if card.Form == nil || len(card.Form.Questions) == 0 {
			return goslack.ModalViewRequest{}, NoFormText, errors.New("no form")
		}
		m, err := formModal(card, modalState{
			ItemKey: card.ItemKey, Version: card.Version, Revision: card.Form.Revision,
			Channel: a.Channel, MessageTS: a.MessageTS,
		})
		return m, FormFailedText, err
	})
}

// openModal opens a modal with the click's trigger id before acknowledging, as the trigger id
// is short-lived. build returns the modal, or the text to show the person when it cannot.
func (h *Handler) openModal(w http.ResponseWriter, r *http.Request, trigger string, a Answer,
	build func(context.Context) (goslack.ModalViewRequest, string, error)) {
	ctx, cancel := context.WithTimeout(r.Context(), modalBudget)
	defer cancel()
	modal, refusal, err := build(ctx)
	if err == nil {
		if _, err = h.client.api.OpenViewContext(ctx, trigger, modal); err != nil {
			refusal = FormFailedText
			h.log.Warn("slack modal not opened", "item", a.ItemKey, "err", err)
		}
	}
	acknowledge(w)
	if err != nil {
		h.notify(r.Context(), a, refusal)
	}
}

// onSubmission turns a submitted form or comment into an Answer for Decide. A full queue keeps
// the modal open with the busy text, so nothing typed is lost.
func (h *Handler) onSubmission(w http.ResponseWriter, r *http.Request, ic goslack.InteractionCallback) {
	var decision Action
	cb := ic.View.CallbackID
	rest, isForm := strings.CutPrefix(cb, formCallbackPrefix)
	if !isForm {
		var isComment bool
		if rest, isComment = strings.CutPrefix(cb, commentCallbackPrefix); !isComment {
			acknowledge(w)
			return
		}
		decision = ActionComment
	} else {
		decision = ActionAnswer
	}
	state, err := decodeModalState(ic.View.PrivateMetadata)
	named, refErr := parseRef(rest)
	if err != nil || refErr != nil || named.ItemKey != state.ItemKey {
		http.Error(w, "malformed modal metadata", http.StatusBadRequest)
		return
	}
	a := Answer{
		ItemKey: state.ItemKey, Version: state.Version, Revision: state.Revision,
		UserID: ic.User.ID, TeamID: cmp.Or(ic.Team.ID, ic.User.TeamID),
		Channel: state.Channel, MessageTS: state.MessageTS,
		Decision: decision, Gesture: GestureModalSubmission,
	}
	values := map[string]map[string]goslack.BlockAction{}
	if ic.View.State != nil {
		values = ic.View.State.Values
	}
	var inputs []string
	if decision == ActionAnswer {
		a.Form = formAnswers(values)
		for id := range values {
			inputs = append(inputs, id)
		}
		slices.Sort(inputs)
	} else {
		a.Text = values[commentBlockID][answerActionID].Value
		inputs = []string{commentBlockID}
	}
	if h.enqueue(a) {
		acknowledge(w)
		return
	}
	if len(inputs) == 0 {
		acknowledge(w)
		h.notify(r.Context(), a, BusyText)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(goslack.NewErrorsViewSubmissionResponse(map[string]string{inputs[0]: BusyText}))
}

// enqueue hands an Answer to Run without waiting; false when the queue is full.
func (h *Handler) enqueue(a Answer) bool {
	select {
	case h.queue <- a:
		return true
	default:
		return false
	}
}

// acknowledge answers Slack with an empty 200 and sends it at once, so Slack has its
// acknowledgement while the handler still posts a notice.
func acknowledge(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()
}

// notify shows text to the person who answered, alone, beside the card. It outlives the
// request, which ends when Slack has its acknowledgement.
func (h *Handler) notify(ctx context.Context, a Answer, text string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), noticeTimeout)
	defer cancel()
	if a.Channel == "" || a.UserID == "" {
		h.log.Warn("slack notice has no channel or user", "item", a.ItemKey)
		return
	}
	if _, err := h.client.api.PostEphemeralContext(ctx, a.Channel, a.UserID,
		goslack.MsgOptionText(escapeText(text), false)); err != nil {
		h.log.Warn("slack notice not posted", "item", a.ItemKey, "err", err)
	}
}
