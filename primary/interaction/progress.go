package interaction

import (
	"context"
	"errors"

	"github.com/turncli/turncli/primary/catalog"
)

func reportProgressFunction() catalog.Function {
	return catalog.Function{Name: "report_progress", Description: "Not available yet."}
}

func (s *Service) reportProgress(context.Context, catalog.Call) (catalog.Result, error) {
	return catalog.Result{}, errors.New("report_progress is not available yet")
}
