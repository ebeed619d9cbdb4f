package interaction

import (
	"context"
	"errors"

	"github.com/turncli/turncli/primary/catalog"
)

func askQuestionsFunction() catalog.Function {
	return catalog.Function{Name: "ask_questions", Description: "Not available yet."}
}

func (s *Service) askQuestions(context.Context, catalog.Call) (catalog.Result, error) {
	return catalog.Result{}, errors.New("ask_questions is not available yet")
}
