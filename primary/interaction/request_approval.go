package interaction

import (
	"context"
	"errors"

	"github.com/turncli/turncli/primary/catalog"
)

func requestApprovalFunction() catalog.Function {
	return catalog.Function{Name: "request_approval", Description: "Not available yet."}
}

func (s *Service) requestApproval(context.Context, catalog.Call) (catalog.Result, error) {
	return catalog.Result{}, errors.New("request_approval is not available yet")
}
