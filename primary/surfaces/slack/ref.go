package slack

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ref names an item and the version of it a gesture was made on. A button's value is a ref, so a
// click on an older rendering of a card is recognisable as stale.
type ref struct {
	ItemKey string
	Version int64
}

// String writes the ref as "<version>:<item key>"; the item key may hold any character.
func (r ref) String() string { return strconv.FormatInt(r.Version, 10) + ":" + r.ItemKey }

var errBadRef = errors.New("malformed item reference")

func parseRef(s string) (ref, error) {
	v, key, ok := strings.Cut(s, ":")
	if !ok || key == "" {
		return ref{}, errBadRef
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return ref{}, errBadRef
	}
	return ref{ItemKey: key, Version: n}, nil
}

// modalState is a modal's private metadata: what the submission answers and where its card is,
// since a view_submission names no channel.
type modalState struct {
	ItemKey   string `json:"item"`
	Version   int64  `json:"version"`
	Revision  int64  `json:"revision,omitempty"`
	Channel   string `json:"channel"`
	MessageTS string `json:"message_ts"`
}

func (m modalState) encode() (string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	if len(b) > maxPrivateMetadata {
		return "", fmt.Errorf("modal metadata of %d bytes exceeds Slack's %d", len(b), maxPrivateMetadata)
	}
	return string(b), nil
}

func decodeModalState(s string) (modalState, error) {
	var m modalState
	if err := json.Unmarshal([]byte(s), &m); err != nil || m.ItemKey == "" {
		return modalState{}, errBadRef
	}
	return m, nil
}

// Action ids of the buttons, and the callback ids of the modals. A modal's callback id is its
// prefix followed by a ref: the form's revision for a form, the card's version for a comment.
const (
	actionPrefix          = "turncli."
	actionsBlockID        = "turncli.actions"
	formCallbackPrefix    = "turncli.form|"
	commentCallbackPrefix = "turncli.comment|"
	commentBlockID        = "comment"
	answerActionID        = "answer"
	questionBlockPrefix   = "q."
)

// buttonLabels are the buttons' texts, one per action a card may offer.
var buttonLabels = map[Action]string{
	ActionApprove:           "Approve",
	ActionDeny:              "Deny",
	ActionComment:           "Comment",
	ActionAllowOnce:         "Allow once",
	ActionAllowThread:       "Allow in this thread",
	ActionAllowConversation: "Allow in this conversation",
	ActionAnswer:            "Answer",
}
