package client

// group is a noun of the command line (tools, calls, context) and its verbs.
type group struct {
	name     string
	summary  string
	commands []*command
}

// command is one verb: how it parses, how it runs and how it explains itself.
type command struct {
	name        string
	usage       []string // synopsis lines after "mindroom-agent GROUP NAME"
	summary     string
	description string
	flags       []flagSpec
	examples    []string
	run         runFunc
}

var (
	cursorFlag  = flagSpec{name: "cursor", arg: "C", usage: "continue from the next_cursor of the previous page"}
	timeoutFlag = flagSpec{name: "timeout", arg: "SECONDS", usage: "wait at most this long for a terminal status (default 30, decimals allowed); 0 prints the receipt at once"}
)

func limitFlag(usage string) flagSpec { return flagSpec{name: "limit", arg: "N", usage: usage} }

// groups is the whole command line; help and completion are generated from it.
var groups = []*group{
	{name: "tools", summary: "list, search, describe and call the tools of this response", commands: []*command{
		{
			name: "list", usage: []string{"[--cursor C] [--limit N]"},
			summary:     "list the tools, one page at a time",
			description: "Prints {\"items\":[...],\"next_cursor\":...}. Each item is a prepared function {\"description\",\"function\",\"toolkit\"} or a deferred toolkit {\"deferred\":true,\"description\",\"toolkit\"} whose functions appear once it is described or called: mindroom-agent tools describe TOOLKIT loads it and names them. Items carry no schemas; use tools describe. When next_cursor is not null, pass it to --cursor for the next page.",
			flags:       []flagSpec{cursorFlag, limitFlag("items per page (server default 100, at most 1000)")},
			examples:    []string{"mindroom-agent tools list", "mindroom-agent tools list --limit 20 --cursor \"$NEXT\""},
			run:         plain(runToolsList),
		},
		{
			name: "search", usage: []string{"QUERY [--toolkit T] [--limit N]"},
			summary:     "find tools whose toolkit, function or description contain every word of QUERY",
			description: "Prints {\"items\":[...]} in catalog order, with the item shapes of tools list. Every whitespace-separated word of QUERY must occur, case-insensitively, in the item's toolkit, function or description. Several QUERY arguments are joined with spaces.",
			flags:       []flagSpec{{name: "toolkit", arg: "T", usage: "only items of toolkit T"}, limitFlag("at most N items (server default 20, at most 100)")},
			examples:    []string{"mindroom-agent tools search weather", "mindroom-agent tools search 'send message' --toolkit slack"},
			run:         plain(runToolsSearch),
		},
		{
			name: "describe", usage: []string{"TOOLKIT FUNCTION", "TOOLKIT.FUNCTION", "TOOLKIT"},
			summary:     "print a function's description, input schema and instructions",
			description: "Prints {\"description\",\"function\",\"input_schema\",\"instructions\",\"toolkit\"}. TOOLKIT.FUNCTION splits on the last dot. A descriptor over 32 KiB is returned as a context document instead: read it with mindroom-agent context read NAME. TOOLKIT alone describes nothing and exits 2, but first loads the toolkit if it is deferred and names its functions, which tools list and tools search then show.",
			examples:    []string{"mindroom-agent tools describe weather.forecast", "mindroom-agent tools describe weather forecast", "mindroom-agent tools describe weather"},
			run:         plain(runToolsDescribe),
		},
		{
			name: "call",
			usage: []string{
				"TOOLKIT FUNCTION [JSON] [--json S | --json-file PATH | --json-stdin] [--call-id UUID] [--timeout SECONDS]",
				"TOOLKIT.FUNCTION [JSON] [--json S | --json-file PATH | --json-stdin] [--call-id UUID] [--timeout SECONDS]",
			},
			summary:     "call a function and wait for its receipt",
			description: "Submits the call, then waits up to --timeout for a terminal status and prints the receipt {\"attachments\",\"call_id\",\"function\",\"outcome\",\"parent_bash_call_id\",\"status\",\"toolkit\"}. The arguments are one JSON object (strict JSON, at most 64 KiB) given once: as the JSON argument, --json, --json-file or --json-stdin; none means {}. Every call has a call id (a fresh random UUID unless --call-id gives one) and every error names it: running the same command again with --call-id and the same arguments shows the progress of that call instead of starting another. Reaching the timeout never cancels the call: it prints the live receipt and exits 3; follow it with mindroom-agent calls wait CALL_ID. If the server cannot be reached while waiting, the last receipt is printed and the exit status is 3. A call is never submitted twice on its own: retrying is yours to do, with the same --call-id.",
			flags: []flagSpec{
				{name: "json", arg: "S", usage: "the arguments object as a string"},
				{name: "json-file", arg: "PATH", usage: "read the arguments object from file PATH"},
				{name: "json-stdin", usage: "read the arguments object from standard input"},
				{name: "call-id", arg: "UUID", usage: "the call's id (default: a fresh random UUID); reuse it to retry safely"},
				timeoutFlag,
			},
			examples: []string{
				`mindroom-agent tools call weather.forecast '{"city":"Lisbon"}'`,
				`mindroom-agent tools call weather forecast --json-file args.json --timeout 120`,
				`jq -n '{city:"Lisbon"}' | mindroom-agent tools call weather.forecast --json-stdin`,
				`mindroom-agent tools call slow.job --timeout 0`,
			},
			run: runToolsCall,
		},
	}},
	{name: "calls", summary: "read and wait for the receipts of calls made in this response", commands: []*command{
		{
			name: "get", usage: []string{"CALL_ID"},
			summary:     "print a call's current receipt",
			description: "Prints the receipt of the call CALL_ID once, without waiting. The exit status follows its status.",
			examples:    []string{"mindroom-agent calls get 0b7e2a8c-3c1f-4b7e-9a51-5d0c2f3e4a6b"},
			run:         plain(runCallsGet),
		},
		{
			name: "wait", usage: []string{"CALL_ID [--timeout SECONDS]"},
			summary:     "wait for a call to finish and print its receipt",
			description: "Reads the receipt of CALL_ID at once, then waits up to --timeout for a terminal status and prints the receipt. Reaching the timeout never cancels the call: it prints the live receipt and exits 3.",
			flags:       []flagSpec{timeoutFlag},
			examples:    []string{"mindroom-agent calls wait 0b7e2a8c-3c1f-4b7e-9a51-5d0c2f3e4a6b --timeout 300"},
			run:         plain(runCallsWait),
		},
	}},
	{name: "context", summary: "list and read the context documents of this response", commands: []*command{
		{
			name: "list", usage: []string{"[--cursor C] [--limit N]"},
			summary:     "list context documents",
			description: "Prints {\"items\":[{\"length\":N,\"name\":\"...\"}],\"next_cursor\":...}; length counts code points. When next_cursor is not null, pass it to --cursor for the next page.",
			flags:       []flagSpec{cursorFlag, limitFlag("items per page (server default 100, at most 1000)")},
			examples:    []string{"mindroom-agent context list"},
			run:         plain(runContextList),
		},
		{
			name: "read", usage: []string{"NAME [--offset N] [--limit N]"},
			summary:     "read a page of a context document",
			description: "Prints {\"name\",\"next_offset\",\"text\"}. Offsets and limits count code points; when next_offset is not null, pass it to --offset for the next page.",
			flags:       []flagSpec{{name: "offset", arg: "N", usage: "first code point to read (server default 0)"}, limitFlag("at most N code points (server default 8000, at most 65536)")},
			examples:    []string{"mindroom-agent context read tool-schema-1", "mindroom-agent context read notes --offset 8000"},
			run:         plain(runContextRead),
		},
	}},
}

func findGroup(name string) *group {
	for _, g := range groups {
		if g.name == name {
			return g
		}
	}
	return nil
}

func (g *group) find(name string) *command {
	for _, c := range g.commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (g *group) commandNames() []string {
	names := make([]string, len(g.commands))
	for i, c := range g.commands {
		names[i] = c.name
	}
	return names
}
