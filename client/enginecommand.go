package client

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// `mindroom-agent engine NAME` runs a background agent's engine: the primary starts it as the
// agent's job. The drivers live in client/engines/...; this package cannot import them (they
// import it), so the binaries pass them in with WithEngines.

// EngineDriver runs one engine with the rest of the command line. Its exit code is the job's.
type EngineDriver func(ctx context.Context, agent *Agent, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int

// WithEngines makes Main serve `mindroom-agent engine NAME` with the named drivers.
func WithEngines(drivers map[string]EngineDriver) Option {
	return func(a *app) { a.engines = drivers }
}

// engineCommand is `mindroom-agent engine`, outside the groups like mcp.
var engineCommand = &command{
	name:    "engine",
	usage:   []string{"NAME [ARGS...]"},
	summary: "run a background agent's engine (started by the primary as the agent's job)",
}

const engineDescription = `Runs the engine NAME as a background agent inside the job the primary started for it, with the job's grant and window: the engine reaches the response's tools through mindroom-agent mcp, and its permission questions go to the people of the conversation. Progress goes to standard output as plain lines, and the last line is the run's result, which the primary reads. The brief is in MINDROOM_AGENT_TASK. It is not meant to be run by hand.`

// engine runs `mindroom-agent engine ARGS`.
func (a *app) engine(ctx context.Context, args []string) int {
	if wantsHelp(args) || (len(args) == 1 && args[0] == "help") {
		return a.printHelp(engineHelp(a.engineNames()))
	}
	if len(args) == 0 {
		fmt.Fprintf(a.stderr, "missing engine name: mindroom-agent engine %s\n", strings.Join(a.engineNames(), "|"))
		return ExitInvalid
	}
	run, ok := a.engines[args[0]]
	if !ok {
		fmt.Fprintf(a.stderr, "unknown engine %q; this build runs: %s\n", args[0], strings.Join(a.engineNames(), ", "))
		return ExitInvalid
	}
	stdin := a.stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	return run(ctx, &Agent{app: a}, args[1:], stdin, a.stdout, a.stderr, a.getenv)
}

func (a *app) engineNames() []string {
	names := make([]string, 0, len(a.engines))
	for n := range a.engines {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func engineHelp(names []string) string {
	var b helpBuilder
	name := "mindroom-agent " + engineCommand.name
	b.section("NAME", name+" - "+engineCommand.summary)
	b.synopsis(name + " " + strings.Join(engineCommand.usage, " "))
	b.section("DESCRIPTION", engineDescription)
	if len(names) > 0 {
		b.section("ENGINES", strings.Join(names, ", "))
	}
	b.lines("EXIT STATUS", "0  the engine ran and its result line was written (the result says how the run went)",
		"2  invalid options or an unknown engine", "other  the driver could not run the engine")
	return b.String()
}
