package shellmode

import (
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/turncli/turncli/internal/fault"
)

// Refusal is the failure of a request that needs the minimal shell mode for agent when
// problems stand in its way: FailedPrecondition naming every problem and its fix, in the message
// for people and as PreconditionFailure violations for programs. outcome says what became of
// the request ("nothing was saved").
func Refusal(agent, outcome string, problems []Problem) error {
	msg := fmt.Sprintf("the minimal shell mode cannot be used for agent %q; %s. %d problem(s): %s",
		agent, outcome, len(problems), Explain(problems))
	details := &errdetails.PreconditionFailure{}
	for _, p := range problems {
		details.Violations = append(details.Violations, &errdetails.PreconditionFailure_Violation{
			Type: p.Check, Subject: agent, Description: p.String(),
		})
	}
	return fault.WithDetails(fault.FailedPrecondition, msg, details)
}
