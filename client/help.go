package client

import (
	"fmt"
	"strings"
)

// Help is man-style text generated from the command table. It never needs the environment.

const helpWidth = 80

const exitStatusText = `0  completed; or the operation has no status (list, search, describe, context)
1  the call failed or was cancelled
2  invalid input, or the server rejected the request (HTTP 400/409/413/422)
3  the call is still queued, running or waiting (timeout reached, or the server became unreachable while waiting)
4  authority unavailable (environment missing or invalid, HTTP 401) or unknown transport outcome (no connection, timeout, other HTTP status, invalid response)`

const environmentText = `MINDROOM_AGENT_CLI_URL     origin of the Agent CLI endpoints (http or https, host, optional port)
MINDROOM_AGENT_CLI_TOKEN   the response's grant, sent as a bearer token and never printed
MINDROOM_AGENT_CLI_WINDOW  this Bash command's window, sent as X-MindRoom-Agent-CLI-Window
TRACEPARENT, TRACESTATE    the command's W3C trace context, sent as traceparent and tracestate (left out when malformed)
They are set in every Bash command of an agent response and read only when a request is sent. HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are ignored.`

const outputText = `One canonical JSON line on standard output (keys sorted, no whitespace). On error it is {"error":"..."}, with "call_id" when the error belongs to a call, and the same message goes to standard error.`

func topHelp() string {
	var b helpBuilder
	b.section("NAME", "mindroom-agent - list, search, describe and call the tools of an agent response")
	var synopsis []string
	for _, g := range groups {
		for _, c := range g.commands {
			for _, u := range c.usage {
				synopsis = append(synopsis, strings.TrimSpace(fmt.Sprintf("mindroom-agent %s %s %s", g.name, c.name, u)))
			}
		}
	}
	synopsis = append(synopsis, "mindroom-agent mcp "+strings.Join(mcpCommand.usage, " "),
		"mindroom-agent completion bash|zsh", "mindroom-agent version | --version", "mindroom-agent [GROUP [COMMAND]] --help")
	b.synopsis(synopsis...)
	b.section("DESCRIPTION", "mindroom-agent is the command-line client of the Agent CLI. Inside an agent's Bash command it talks to the response that runs the command: it discovers the response's tools, calls them, waits for their receipts and reads the response's context documents; mindroom-agent mcp serves the same tools to an MCP engine started in the command. Options may come before or after arguments, as --name value or --name=value; \"--\" ends the options.")
	var cmds []string
	for _, g := range groups {
		for _, c := range g.commands {
			cmds = append(cmds, fmt.Sprintf("%-18s %s", g.name+" "+c.name, c.summary))
		}
	}
	cmds = append(cmds, fmt.Sprintf("%-18s %s", mcpCommand.name, mcpCommand.summary),
		fmt.Sprintf("%-18s %s", engineCommand.name, engineCommand.summary),
		fmt.Sprintf("%-18s %s", "completion", "print a bash or zsh completion script"),
		fmt.Sprintf("%-18s %s", "version", "print the build: module version, revision, Go version"))
	b.lines("COMMANDS", cmds...)
	b.section("OUTPUT", outputText)
	b.lines("EXIT STATUS", strings.Split(exitStatusText, "\n")...)
	b.lines("ENVIRONMENT", strings.Split(environmentText, "\n")...)
	b.verbatim("EXAMPLES",
		"mindroom-agent tools search weather",
		"mindroom-agent tools describe weather.forecast",
		`mindroom-agent tools call weather.forecast '{"city":"Lisbon"}'`,
		"mindroom-agent tools call --help",
		"mindroom-agent mcp --help")
	return b.String()
}

func groupHelp(g *group) string {
	var b helpBuilder
	b.section("NAME", fmt.Sprintf("mindroom-agent %s - %s", g.name, g.summary))
	var synopsis, cmds, examples []string
	for _, c := range g.commands {
		for _, u := range c.usage {
			synopsis = append(synopsis, strings.TrimSpace(fmt.Sprintf("mindroom-agent %s %s %s", g.name, c.name, u)))
		}
		cmds = append(cmds, fmt.Sprintf("%-10s %s", c.name, c.summary))
		examples = append(examples, c.examples[0])
	}
	b.synopsis(synopsis...)
	b.lines("COMMANDS", cmds...)
	b.section("OPTIONS", fmt.Sprintf("Every command takes -h, --help. Run mindroom-agent %s COMMAND --help for its options.", g.name))
	b.verbatim("EXAMPLES", examples...)
	return b.String()
}

func commandHelp(g *group, c *command) string {
	var b helpBuilder
	name := "mindroom-agent " + g.name + " " + c.name
	b.section("NAME", name+" - "+c.summary)
	synopsis := make([]string, len(c.usage))
	for i, u := range c.usage {
		synopsis[i] = strings.TrimSpace(name + " " + u)
	}
	b.synopsis(synopsis...)
	b.section("DESCRIPTION", c.description)
	var opts []string
	for _, f := range c.flags {
		opts = append(opts, flagLine("--"+f.name+" "+f.arg, f.usage))
	}
	opts = append(opts, flagLine("-h, --help", "print this help"))
	b.lines("OPTIONS", opts...)
	b.section("OUTPUT", outputText)
	b.lines("EXIT STATUS", strings.Split(exitStatusText, "\n")...)
	b.lines("ENVIRONMENT", strings.Split(environmentText, "\n")...)
	b.verbatim("EXAMPLES", c.examples...)
	return b.String()
}

func completionHelp() string {
	var b helpBuilder
	b.section("NAME", "mindroom-agent completion - print a shell completion script")
	b.synopsis("mindroom-agent completion bash", "mindroom-agent completion zsh")
	b.section("DESCRIPTION", "Prints a script that completes mindroom-agent's commands and options in bash or zsh. It needs no environment.")
	b.verbatim("EXAMPLES",
		`source <(mindroom-agent completion bash)`,
		`mindroom-agent completion zsh > "${fpath[1]}/_mindroom-agent"`)
	return b.String()
}

func flagLine(flag, usage string) string {
	return fmt.Sprintf("%-18s %s", strings.TrimSpace(flag), usage)
}

// helpBuilder writes sections: a title, then indented, wrapped paragraphs.
type helpBuilder struct{ strings.Builder }

func (b *helpBuilder) section(title, text string) { b.lines(title, text) }

func (b *helpBuilder) lines(title string, lines ...string) {
	b.title(title)
	for _, l := range lines {
		b.WriteString(wrap(l, "    ", "", helpWidth))
	}
}

// synopsis writes usage lines whose continuations hang under the command.
func (b *helpBuilder) synopsis(lines ...string) {
	b.title("SYNOPSIS")
	for _, l := range lines {
		b.WriteString(wrap(l, "    ", "        ", helpWidth))
	}
}

// verbatim writes lines unwrapped, so examples can be copied.
func (b *helpBuilder) verbatim(title string, lines ...string) {
	b.title(title)
	for _, l := range lines {
		b.WriteString("    " + l + "\n")
	}
}

func (b *helpBuilder) title(title string) {
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString(title + "\n")
}

// wrap breaks text into lines of at most width columns, each starting with indent and
// continuation lines with indent+hang. A line shaped "term   text" keeps its alignment, and
// its continuation lines hang under the text.
func wrap(text, indent, hang string, width int) string {
	head, body := "", text
	if i := strings.Index(text, "  "); i > 0 {
		j := i
		for j < len(text) && text[j] == ' ' {
			j++
		}
		head, body = text[:j], text[j:]
	}
	hang = indent + hang + strings.Repeat(" ", len(head))
	var out strings.Builder
	line, fresh := indent+head, true
	for _, w := range strings.Fields(body) {
		if !fresh && len(line)+1+len(w) > width {
			out.WriteString(line + "\n")
			line, fresh = hang, true
		}
		if !fresh {
			line += " "
		}
		line += w
		fresh = false
	}
	out.WriteString(line + "\n")
	return out.String()
}
