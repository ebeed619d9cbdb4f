package client

import (
	"io"

	"github.com/turncli/turncli/internal/buildinfo"
)

// version prints the build of `mindroom-agent version` (or --version): one line of text, like
// help, and needs no environment.
func (a *app) version(args []string) int {
	if len(args) > 0 {
		return a.fail(invalidf("version takes no arguments"))
	}
	io.WriteString(a.stdout, buildinfo.Read().Line("mindroom-agent")+"\n")
	return ExitCompleted
}
