package interaction

import (
	"context"
	"errors"

	"github.com/turncli/turncli/primary/catalog"
)

func permissionPromptFunction() catalog.Function {
	return catalog.Function{Name: "permission_prompt", Description: "Not available yet."}
}

func (s *Service) permissionPrompt(context.Context, catalog.Call) (catalog.Result, error) {
	return catalog.Result{}, errors.New("permission_prompt is not available yet")
}
