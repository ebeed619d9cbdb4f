package slack

import (
	"strings"

	goslack "github.com/slack-go/slack"
)

// formModal is the modal a question form is answered in. Its callback id carries the item key
// and the form's revision, its private metadata that and where the card is, since a submission
// names no channel. Questions and options are shown as plain text, which Slack never parses.
func formModal(card Card, state modalState) (goslack.ModalViewRequest, error) {
	meta, err := state.encode()
	if err != nil {
		return goslack.ModalViewRequest{}, err
	}
	title, _ := fitEscaped(card.Title, maxTitle, false)
	blocks := []goslack.Block{section("*" + title + "*")}
	for _, q := range card.Form.Questions {
		var element goslack.BlockElement
		switch q.Kind {
		case QuestionSingle:
			element = goslack.NewRadioButtonsBlockElement(answerActionID, options(q.Options)...)
		case QuestionMulti:
			element = goslack.NewCheckboxGroupsBlockElement(answerActionID, options(q.Options)...)
		default:
			element = goslack.NewPlainTextInputBlockElement(nil, answerActionID).WithMultiline(true).WithMaxLength(maxAnswerText)
		}
		blocks = append(blocks, goslack.NewInputBlock(questionBlockPrefix+q.ID, plain(q.Prompt, maxTitle), nil, element).WithOptional(!q.Required))
	}
	return goslack.ModalViewRequest{
		Type:            goslack.VTModal,
		Title:           plain("Answer", maxModalTitle),
		Submit:          plain("Submit", maxModalTitle),
		Close:           plain("Cancel", maxModalTitle),
		CallbackID:      formCallbackPrefix + ref{ItemKey: card.ItemKey, Version: card.Form.Revision}.String(),
		PrivateMetadata: meta,
		Blocks:          goslack.Blocks{BlockSet: blocks},
	}, nil
}

// commentModal asks for the text of a comment on a card.
func commentModal(state modalState) (goslack.ModalViewRequest, error) {
	meta, err := state.encode()
	if err != nil {
		return goslack.ModalViewRequest{}, err
	}
	input := goslack.NewPlainTextInputBlockElement(nil, answerActionID).WithMultiline(true).WithMaxLength(maxAnswerText)
	return goslack.ModalViewRequest{
		Type:            goslack.VTModal,
		Title:           plain("Comment", maxModalTitle),
		Submit:          plain("Send", maxModalTitle),
		Close:           plain("Cancel", maxModalTitle),
		CallbackID:      commentCallbackPrefix + ref{ItemKey: state.ItemKey, Version: state.Version}.String(),
		PrivateMetadata: meta,
		Blocks:          goslack.Blocks{BlockSet: []goslack.Block{goslack.NewInputBlock(commentBlockID, plain("Comment", maxModalTitle), nil, input)}},
	}, nil
}

func options(opts []Option) []*goslack.OptionBlockObject {
	out := make([]*goslack.OptionBlockObject, 0, len(opts))
	for _, o := range opts {
		out = append(out, goslack.NewOptionBlockObject(o.Value, plain(o.Label, maxOptionText), nil))
	}
	return out
}

// plain is a plain_text object cut to limit characters.
func plain(text string, limit int) *goslack.TextBlockObject {
	if runes(text) > limit {
		text = string([]rune(text)[:limit-1]) + "…"
	}
	return goslack.NewTextBlockObject(goslack.PlainTextType, text, false, false)
}

// formAnswers reads a submitted form's answers by question id; unanswered questions are absent.
func formAnswers(values map[string]map[string]goslack.BlockAction) map[string][]string {
	out := map[string][]string{}
	for blockID, actions := range values {
		id, ok := strings.CutPrefix(blockID, questionBlockPrefix)
		if !ok {
			continue
		}
		a := actions[answerActionID]
		var values []string
		switch {
		case a.Value != "":
			values = []string{a.Value}
		case a.SelectedOption.Value != "":
			values = []string{a.SelectedOption.Value}
		default:
			for _, o := range a.SelectedOptions {
				values = append(values, o.Value)
			}
		}
		if len(values) > 0 {
			out[id] = values
		}
	}
	return out
}
