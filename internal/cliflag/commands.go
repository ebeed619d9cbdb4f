package cliflag

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Command is one subcommand of a daemon, as its help lists it.
type Command struct{ Name, Summary string }

// Commands are a daemon's subcommands, in the order its help lists them.
type Commands []Command

// Names are the commands' names, the candidates of a "did you mean" suggestion.
func (cs Commands) Names() []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return names
}

// Write lists the commands under a "Commands:" heading, their summaries aligned.
func (cs Commands) Write(w io.Writer) {
	fmt.Fprint(w, "Commands:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range cs {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Summary)
	}
	tw.Flush()
}
