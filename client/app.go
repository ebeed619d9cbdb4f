package client

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"strings"
	"time"
)

// Main runs mindroom-agent with args (without the program name) and returns its exit code.
// getenv is the only way it reads the environment.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, opts ...Option) int {
	a := &app{
		stdin:        stdin,
		stdout:       stdout,
		stderr:       stderr,
		getenv:       getenv,
		random:       rand.Reader,
		pollInterval: defaultPollInterval,
	}
	for _, o := range opts {
		o(a)
	}
	return a.run(ctx, args)
}

// app is one run of the command line and everything it may touch.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	random         io.Reader
	pollInterval   time.Duration
	dial           dialFunc                // nil: the system dialer (tests replace it)
	requestTimeout time.Duration           // bounds each request; zero: 30 s (tests shorten it)
	hc             *http.Client            // created on the first request, reused by the next ones
	serveMCP       MCPServer               // nil: `mindroom-agent mcp` cannot run (see WithMCP)
	engines        map[string]EngineDriver // `mindroom-agent engine NAME` (see WithEngines)
}

// connect validates the environment and returns a transport to it. It is called only when a
// request is about to be sent.
func (a *app) connect() (*transport, error) {
	ep, err := loadEndpoint(a.getenv)
	if err != nil {
		return nil, err
	}
	if a.hc == nil {
		a.hc = newHTTPClient(a.dial)
	}
	return &transport{ep: ep, hc: a.hc, timeout: a.requestTimeout}, nil
}

func (a *app) run(ctx context.Context, args []string) int {
	defer func() {
		if a.hc != nil {
			a.hc.CloseIdleConnections()
		}
	}()
	if len(args) == 0 {
		return a.fail(invalidf("missing command; run `mindroom-agent --help`"))
	}
	switch args[0] {
	case "-h", "--help":
		return a.printHelp(topHelp())
	case "help":
		return a.helpTopic(args[1:])
	case "completion":
		return a.completion(args[1:])
	case "version", "--version":
		return a.version(args[1:])
	case mcpCommand.name:
		return a.mcp(ctx, args[1:])
	case engineCommand.name:
		return a.engine(ctx, args[1:])
	}
	g := findGroup(args[0])
	if g == nil {
		if strings.HasPrefix(args[0], "-") {
			return a.fail(invalidf("unknown option %s; run `mindroom-agent --help`", args[0]))
		}
		return a.fail(invalidf("unknown command %q; run `mindroom-agent --help`", args[0]))
	}
	rest := args[1:]
	if len(rest) == 0 {
		return a.fail(invalidf("missing command: mindroom-agent %s %s; run `mindroom-agent %s --help`",
			g.name, strings.Join(g.commandNames(), "|"), g.name))
	}
	switch rest[0] {
	case "-h", "--help":
		return a.printHelp(groupHelp(g))
	case "help":
		return a.helpTopic(args)
	}
	c := g.find(rest[0])
	if c == nil {
		return a.fail(invalidf("unknown command %q of %s; run `mindroom-agent %s --help`", rest[0], g.name, g.name))
	}
	if wantsHelp(rest[1:]) {
		return a.printHelp(commandHelp(g, c))
	}
	p, parseErr := parseArgs(rest[1:], c.flags)
	res, err := c.run(ctx, a, p, parseErr)
	if err != nil {
		return a.fail(err)
	}
	return writeResult(a.stdout, a.stderr, res)
}

// helpTopic prints the help of `help [GROUP [COMMAND]]` (also `GROUP help [COMMAND]`).
func (a *app) helpTopic(topic []string) int {
	var words []string
	for _, w := range topic {
		if w != "help" && w != "-h" && w != "--help" {
			words = append(words, w)
		}
	}
	switch {
	case len(words) == 0:
		return a.printHelp(topHelp())
	case words[0] == "completion" && len(words) == 1:
		return a.printHelp(completionHelp())
	case words[0] == mcpCommand.name && len(words) == 1:
		return a.printHelp(mcpHelp())
	case words[0] == engineCommand.name && len(words) == 1:
		return a.printHelp(engineHelp(a.engineNames()))
	}
	g := findGroup(words[0])
	if g == nil {
		return a.fail(invalidf("no help for %q; run `mindroom-agent --help`", strings.Join(words, " ")))
	}
	if len(words) == 1 {
		return a.printHelp(groupHelp(g))
	}
	c := g.find(words[1])
	if c == nil || len(words) > 2 {
		return a.fail(invalidf("no help for %q; run `mindroom-agent %s --help`", strings.Join(words, " "), g.name))
	}
	return a.printHelp(commandHelp(g, c))
}

func (a *app) printHelp(text string) int {
	io.WriteString(a.stdout, text)
	return ExitCompleted
}

func (a *app) fail(err error) int {
	return writeError(a.stdout, a.stderr, err)
}
