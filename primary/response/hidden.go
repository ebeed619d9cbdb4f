package response

import (
	"errors"
	"strings"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/catalog"
)

// explainHidden turns the catalog's refusal of a function that only the standard shell mode
// keeps from this response's shell into the one message the agent needs: the function is not
// missing, it is offered natively (the native catalog has every function the shell mode hides),
// and an admin can offer it in the shell too. Every other error is returned as it is.
func (r *Response) explainHidden(err error, toolkit, function string) error {
	if !errors.Is(err, catalog.ErrHiddenInStandard) {
		return err
	}
	return fault.Newf(fault.InvalidArgument, "%s.%s is not offered in this shell: its shell mode is standard, which offers only "+
		"functions that finish inside the command. It is offered to you natively, as a direct tool call: call it that way instead. "+
		"To have it in this shell too, an admin sets the minimal shell mode for this agent in this conversation with: %s",
		toolkit, function, r.setMinimalCommand())
}

// setMinimalCommand is the operator command that stores the minimal shell mode for this
// response's agent, conversation and shell placement, each value quoted as one shell word.
func (r *Response) setMinimalCommand() string {
	words := []string{"turncli shell set minimal --agent", catalog.ShellWord(r.spec.Agent), "--channel", catalog.ShellWord(r.spec.Channel)}
	if r.spec.Thread != "" {
		words = append(words, "--thread", catalog.ShellWord(r.spec.Thread))
	}
	if r.spec.WorkerKey != "" {
		words = append(words, "--worker-key", catalog.ShellWord(r.spec.WorkerKey))
	}
	return strings.Join(words, " ")
}
