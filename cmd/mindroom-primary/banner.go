package main

import (
	"fmt"
	"strings"

	"github.com/turncli/turncli/internal/statedir"
)

// banner is what a person starting the primary at a terminal reads once it serves: where the
// dashboard is and how to sign in to it, where metrics are (or how to get them), the other
// addresses, and what to try next. It is not printed when stderr is not a terminal: logs
// there are for collectors. stateDir is the state directory as the person gave it.
func banner(ep statedir.Endpoints, stateDir string) string {
	var b strings.Builder
	row := func(label, value string) { fmt.Fprintf(&b, "  %-11s%s\n", label, value) }
	b.WriteString("\nmindroom-primary is serving.\n\n")
	row("Dashboard", ep.HTTP+"/ui/")
	if ep.OperatorTokenFile != "" {
		row("Sign in", "with the first admin's credential: cat "+ep.OperatorTokenFile)
	} else {
		row("Sign in", "with an operator's credential (mindroom-primary operators add NAME --role admin)")
	}
	if ep.Metrics != "" {
		row("Metrics", ep.Metrics+"/metrics (health: /healthz, /readyz)")
	} else {
		row("Metrics", "none (--metrics-listen 127.0.0.1:7423 serves them)")
	}
	row("Agent CLI", ep.AgentCLI)
	row("gRPC", ep.GRPC)
	fmt.Fprintf(&b, "\nIn another terminal: mindroom-primary shell --state-dir %s (make shell). Ctrl-C stops the primary.\n\n", stateDir)
	return b.String()
}
