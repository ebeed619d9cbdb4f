package dashboard

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
)

// The form of a question form: one input group per question, named by the question's id
// ("q-<id>" for chosen option values, "c-<id>" for custom text). The server checks the answers;
// the form only offers what the question allows.

type questionSpec struct {
	ID          string                          `json:"id"`
	Prompt      string                          `json:"prompt"`
	Type        string                          `json:"type"`
	Options     []struct{ Label, Value string } `json:"options"`
	Required    *bool                           `json:"required"`
	AllowCustom *bool                           `json:"allowCustom"`
}

type answer struct {
	Values []string `json:"values,omitempty"`
	Custom string   `json:"custom,omitempty"`
}

// questionView is one question as the form shows it, with the draft's answer.
type questionView struct {
	ID, Prompt, Type string
	Required         bool
	AllowCustom      bool
	Options          []optionView
	Custom           string
}

type optionView struct {
	Label, Value string
	Checked      bool
}

type questionPage struct {
	Form      *operatorv1.QuestionForm
	Questions []questionView
	Mine      bool // the signed-in operator is the requester, the only one who may answer
	Pending   bool
}

func parseQuestions(form *operatorv1.QuestionForm) ([]questionSpec, map[string]answer, error) {
	var specs []questionSpec
	if err := json.Unmarshal([]byte(form.GetQuestionsJson()), &specs); err != nil {
		return nil, nil, err
	}
	answers := map[string]answer{}
	saved := form.GetDraftJson()
	if form.GetAnswersJson() != "" {
		saved = form.GetAnswersJson()
	}
	if saved != "" {
		if err := json.Unmarshal([]byte(saved), &answers); err != nil {
			return nil, nil, err
		}
	}
	return specs, answers, nil
}

func questionViews(specs []questionSpec, answers map[string]answer) []questionView {
	views := make([]questionView, 0, len(specs))
	for _, sp := range specs {
		a := answers[sp.ID]
		v := questionView{ID: sp.ID, Prompt: sp.Prompt, Type: sp.Type, Custom: a.Custom,
			Required:    sp.Required == nil || *sp.Required,
			AllowCustom: sp.Type == "text" || sp.AllowCustom == nil || *sp.AllowCustom}
		for _, o := range sp.Options {
			v.Options = append(v.Options, optionView{Label: o.Label, Value: o.Value, Checked: slices.Contains(a.Values, o.Value)})
		}
		views = append(views, v)
	}
	return views
}

// questionsFor is the requester whose forms the signed-in operator is shown: their own, or
// everybody's ("") for an admin, who watches what every conversation waits for. Answering
// stays the requester's (the server refuses anyone else).
func (q *request) questionsFor() string {
	if q.s.admin() {
		return ""
	}
	return q.s.name
}

func (s *Server) listQuestions(q *request) ([]*operatorv1.QuestionForm, error) {
	resp, err := s.op.ListQuestions(q.ctx, &operatorv1.ListQuestionsRequest{Requester: q.questionsFor(), PageSize: 50})
	return resp.GetQuestions(), err
}

func (s *Server) loadQuestion(q *request) (questionPage, error) {
	id, err := q.id()
	if err != nil {
		return questionPage{}, err
	}
	resp, err := s.op.GetQuestion(q.ctx, &operatorv1.GetQuestionRequest{QuestionId: id})
	if err != nil {
		return questionPage{}, err
	}
	form := resp.GetQuestion()
	specs, answers, err := parseQuestions(form)
	if err != nil {
		return questionPage{}, err
	}
	return questionPage{Form: form, Questions: questionViews(specs, answers), Mine: form.GetRequester() == q.s.name,
		Pending: form.GetStatus() == operatorv1.QuestionStatus_QUESTION_STATUS_PENDING}, nil
}

func (s *Server) question(q *request) error {
	p, err := s.loadQuestion(q)
	if err != nil {
		return err
	}
	s.render(q, 200, "question", p.Form.GetTitle(), p)
	return nil
}

// answerQuestion saves the form's answers as a draft, or submits them ("action").
func (s *Server) answerQuestion(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	resp, err := s.op.GetQuestion(q.ctx, &operatorv1.GetQuestionRequest{QuestionId: id})
	if err != nil {
		return err
	}
	specs, _, err := parseQuestions(resp.GetQuestion())
	if err != nil {
		return err
	}
	revision, err := strconv.ParseUint(q.r.PostFormValue("revision"), 10, 64)
	if err != nil {
		return fault.New(fault.InvalidArgument, "the form has no revision; reload it")
	}
	answers := map[string]answer{}
	for _, sp := range specs {
		a := answer{Values: q.r.PostForm["q-"+sp.ID], Custom: strings.TrimSpace(q.r.PostFormValue("c-" + sp.ID))}
		if len(a.Values) > 0 || a.Custom != "" {
			answers[sp.ID] = a
		}
	}
	raw, err := json.Marshal(answers)
	if err != nil {
		return err
	}
	back := "/ui/questions/" + strconv.FormatUint(id, 10)
	switch q.r.PostFormValue("action") {
	case "draft":
		if _, err := s.op.SaveQuestionDraft(q.ctx, &operatorv1.SaveQuestionDraftRequest{QuestionId: id, Revision: revision, AnswersJson: string(raw)}); err != nil {
			return err
		}
		return s.redirect(q, back, "Draft saved.")
	case "submit":
		if _, err := s.op.SubmitQuestionAnswers(q.ctx, &operatorv1.SubmitQuestionAnswersRequest{QuestionId: id, Revision: revision, AnswersJson: string(raw)}); err != nil {
			return err
		}
		return s.redirect(q, back, "Answers submitted.")
	default:
		return fault.New(fault.InvalidArgument, "choose to save a draft or to submit")
	}
}
