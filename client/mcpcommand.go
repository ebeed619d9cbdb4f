package client

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// `mindroom-agent mcp` is served by package client/mcp, which imports this one; this file is
// its command line: the entry of the registry, the help, and reading the options.

// mcpCommand is `mindroom-agent mcp`, the one command outside the groups. Help and
// completion read it; app.mcp runs it.
var mcpCommand = &command{
	name:    "mcp",
	usage:   []string{"[--page-size N]"},
	summary: "serve this response's tools to an MCP engine over standard I/O",
	flags: []flagSpec{{name: "page-size", arg: "N",
		usage: "list tools in pages of one Agent CLI page of at most N items (1 to 1000); default: the whole catalog in one page"}},
}

const mcpDescription = `Runs an MCP server (Model Context Protocol, stdio transport: one JSON-RPC 2.0 message per line on standard input and standard output, logs on standard error) inside a Bash command of an agent response. An engine started in the same command, such as Claude Code with --mcp-config, sees every function of the response's catalog as an MCP tool, and every MCP call is an Agent CLI call made with this command's grant and window: the same receipts, limits, approvals and authorisation as mindroom-agent tools call. The environment is read only when a request needs the Agent CLI. The server exits when standard input ends, after answering the requests in progress.`

const mcpNamesText = `TOOLKIT.FUNCTION is the tool TOOLKIT__FUNCTION, except that functions of the interaction toolkit keep their bare names (permission_prompt, ask_questions, ...), so that --permission-prompt-tool mcp__SERVER__permission_prompt reaches interaction.permission_prompt. Names are made of letters, digits, "_" and "-", at most 64 characters. A function whose name would break these rules or could be read two ways (its toolkit contains "__" or starts or ends with "_"; a bare name contains "__" or starts with "_") is named "_" + its name with other characters turned into "_" and shortened + "_" + 8 hex digits of a SHA-256 of its toolkit and function. Only those names start with "_"; they never change between runs and are resolved through the catalog's listing, while every other name is decoded directly. Tool titles (MCP 2025-06-18 and later) are TOOLKIT.FUNCTION.`

const mcpListingText = `tools/list reads the Agent CLI's tools.list and describes each function once per process with tools.describe, which needs this command's window (a descriptor over 32 KiB is read back with context.read). A tool's description is the function's description followed by its instructions; its input schema is the function's, with "type":"object" added when it has no type. A deferred toolkit is loaded by describing it, and its page is then read again to find its functions; a toolkit that does not load, or a function whose describe is rejected with HTTP 422, is left out and logged. Without --page-size the whole catalog is one page, because engines such as Claude Code and Codex read only the first page; with it, each page is one Agent CLI page and nextCursor continues the listing.`

const mcpAnnotationsText = `Every tool carries annotations (MCP 2025-03-26 and later) that claim only what the function's traits say. The catalog gives a function the traits needs_confirmation, user_input, external_execution and ends_turn; tools.describe does not return them, and none of them says that a function changes nothing, only adds, may be repeated or stays in a closed world. So every tool gets the hints that claim no less risk, written out:`

// mcpAnnotationLines are the hints of every tool, one per line. Package client/mcp, which
// sends them, tests that they match.
var mcpAnnotationLines = []string{
	"readOnlyHint false: no trait says a function changes nothing.",
	"destructiveHint true: no trait says a function only adds.",
	"idempotentHint false: no trait says a repeated call has no further effect (external_execution and ends_turn say it has).",
	"openWorldHint true: no trait says a function stays in a closed world (user_input and external_execution say it does not).",
	"title TOOLKIT.FUNCTION.",
	"An engine that lets only read-only tools run without asking, such as Codex when unattended, asks before each call or declines it.",
}

const mcpCallsText = `tools/call submits tools.call with a fresh call id and waits, long-polling, until the call is terminal, however long it takes. A completed call gives one text content: the outcome itself when it is a string, its canonical JSON otherwise, plus structuredContent when the outcome is an object (MCP 2025-06-18 and later). A failed or cancelled call gives isError true and its outcome. Attachments follow as a second text content {"attachments":[...]}. The call id is in _meta as mindroom-agent/call_id. A traceparent (and tracestate) in the request's _meta is sent with the call's Agent CLI requests instead of TRACEPARENT, so the call continues the engine's trace. A request with a progressToken gets notifications/progress every 25 seconds while the call runs. notifications/cancelled stops the wait and the answer, never the call, whose receipt stays readable with mindroom-agent calls wait. permission_prompt, an engine's permission hook, always answers with a decision: when none can be had (the Agent CLI refuses the call or cannot be reached, the call is cancelled, interrupted or fails, waiting for it fails, or this server is stopped while it waits), the answer is a normal result whose text is {"behavior":"deny","message":"<why>"}, never a JSON-RPC error or isError.`

const mcpTasksText = `MCP 2026-07-28's Tasks extension (io.modelcontextprotocol/tasks), which server/discover declares. A tools/call whose _meta client capabilities declare it under "extensions" is answered at once with a task ("resultType":"task") instead of waiting, except permission_prompt, which always answers with its decision, and a call the Agent CLI rejects, which answers with the rejection. The task is the call's receipt: its taskId is the call id (a version 7 UUID, whose first 48 bits are createdAt), it lives as long as the receipt (ttlMs 86400000, the longest a response lasts), and tasks/get reads it with this command's grant, waiting up to 5 seconds for the call to settle (pollIntervalMs 1000 suggests the pause between two). A queued, running or waiting call is "working", its statusMessage saying which ("waiting for a person to decide" while an approval or answer is pending: never "input_required", as nothing is asked of the MCP client); a settled call is "completed" with "result", the result tools/call would have given (isError for a failed or cancelled call). tasks/cancel is acknowledged but the call goes on (Agent CLI calls are never cancelled by their caller); tasks/update is acknowledged, as no task asks for input. A client that does not declare the extension gets the synchronous answer, as before. MCP 2025-11-25's experimental tasks are served from the same receipts: initialize declares tasks for tools/call, every tool but permission_prompt is "taskSupport":"optional", a tools/call with a "task" param answers {"task":...} (working, ttl and pollInterval as above), tasks/get reads its status ("completed", "failed" for an isError result, or "cancelled"), and tasks/result waits for the call and answers its result with _meta io.modelcontextprotocol/related-task. tasks/list and tasks/cancel are not served there (-32601): the Agent CLI neither lists nor cancels calls.`

const mcpErrorsText = `Except for permission_prompt (see CALLS), what a model can act on is a tools/call result with isError true: a rejection by the Agent CLI (HTTP 400, 409, 413 or 422 with its detail: "Bash call has ended" once the Bash command that started this server has ended, an unknown toolkit or function, a limit, a fence), or a transport failure that leaves the call's fate unknown, naming the call id to wait for. JSON-RPC errors: -32001 when the Agent CLI authority is unavailable (environment missing or invalid, HTTP 401: the response has ended); -32002 when an Agent CLI request made to list tools or to resolve a hashed name fails (data.status is its HTTP status); -32602 for invalid params (also a 2026-07-28 request whose _meta lacks the client's capabilities), an unknown tool name, a cursor this server did not issue, or a taskId that is no task of this server or whose receipt the Agent CLI does not know ("Failed to retrieve task: Task not found"); -32021 for a task method from a request that does not declare the Tasks extension (data.requiredCapabilities names it); -32022 for a request whose _meta names a revision this server does not serve (data.supported lists the revisions served, data.requested the one asked for); -32601 for methods its revision does not have (served: initialize, ping, tools/list and tools/call before 2026-07-28, and tasks/get and tasks/result in 2025-11-25; server/discover, tools/list, tools/call, tasks/get, tasks/update and tasks/cancel in 2026-07-28); -32700 and -32600 for lines that are not JSON-RPC requests. Notifications are never answered.`

const mcpProtocolText = `MCP 2026-07-28, stateless: a request whose _meta names the revision (io.modelcontextprotocol/protocolVersion) and the client's capabilities (io.modelcontextprotocol/clientCapabilities) needs no initialize and depends on no earlier request; its result carries "resultType":"complete" and this server's identity in _meta (io.modelcontextprotocol/serverInfo). server/discover answers the revisions served (2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05), the capabilities (with the Tasks extension, see TASKS), the server's identity and instructions. MCP 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05, with the initialize handshake: initialize answers with the client's revision when it is one of these, else with 2025-11-25 (also when asked for 2026-07-28, which has no handshake), and a request that names no revision speaks the one initialize chose. Both eras are served at once, request by request. The only capability is tools (no listChanged). Requests are answered concurrently, so a long call does not hold up others; JSON-RPC batches are answered with one array.`

const mcpExitText = `0  standard input ended and every request in progress was answered, or SIGINT or SIGTERM
2  invalid options
4  standard input or standard output failed`

// mcp runs `mindroom-agent mcp ARGS`.
func (a *app) mcp(ctx context.Context, args []string) int {
	if wantsHelp(args) || (len(args) == 1 && args[0] == "help") {
		return a.printHelp(mcpHelp())
	}
	// Standard output belongs to the protocol, so option errors go to stderr only.
	fail := func(err error) int {
		fmt.Fprintln(a.stderr, err)
		return ExitInvalid
	}
	p, err := parseArgs(args, mcpCommand.flags)
	if err != nil {
		return fail(err)
	}
	if len(p.positionals) > 0 {
		return fail(invalidf("mcp takes no arguments, got %q; run `mindroom-agent mcp --help`", p.positionals[0]))
	}
	pageSize := 0
	if v, ok := p.value("page-size"); ok {
		if pageSize, err = parsePageSize(v); err != nil {
			return fail(err)
		}
	}
	if a.serveMCP == nil {
		fmt.Fprintln(a.stderr, "mcp is not available in this build of mindroom-agent")
		return ExitUnavailable
	}
	stdin := a.stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	agent := &Agent{app: a}
	return a.serveMCP(ctx, agent, stdin, a.stdout, a.stderr, pageSize)
}

func mcpHelp() string {
	var b helpBuilder
	name := "mindroom-agent " + mcpCommand.name
	b.section("NAME", name+" - "+mcpCommand.summary)
	b.synopsis(name + " " + strings.Join(mcpCommand.usage, " "))
	b.section("DESCRIPTION", mcpDescription)
	b.section("TOOL NAMES", mcpNamesText)
	b.section("LISTING", mcpListingText)
	b.lines("TOOL ANNOTATIONS", append([]string{mcpAnnotationsText}, mcpAnnotationLines...)...)
	b.section("CALLS", mcpCallsText)
	b.section("TASKS", mcpTasksText)
	b.section("ERRORS", mcpErrorsText)
	b.section("PROTOCOL", mcpProtocolText)
	var opts []string
	for _, f := range mcpCommand.flags {
		opts = append(opts, flagLine("--"+f.name+" "+f.arg, f.usage))
	}
	b.lines("OPTIONS", append(opts, flagLine("-h, --help", "print this help"))...)
	b.section("OUTPUT", "Standard output carries JSON-RPC messages only, one per line. Logs and option errors go to standard error.")
	b.lines("EXIT STATUS", strings.Split(mcpExitText, "\n")...)
	b.lines("ENVIRONMENT", append(strings.Split(environmentText, "\n"),
		"An engine that starts its MCP servers with a reduced environment must pass these three variables through.")...)
	b.verbatim("EXAMPLES",
		`printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | mindroom-agent mcp`,
		`echo '{"mcpServers":{"mindroom":{"command":"mindroom-agent","args":["mcp"]}}}' > mcp.json`,
		`claude -p "$TASK" --mcp-config mcp.json --permission-prompt-tool mcp__mindroom__permission_prompt`)
	return b.String()
}

// parsePageSize reads --page-size: 1 to 1000 items per Agent CLI page.
func parsePageSize(s string) (int, error) {
	n, err := parseInt("page-size", s)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > MaxListLimit {
		return 0, invalidf("option --page-size must be from 1 to %s, not %s", strconv.Itoa(MaxListLimit), s)
	}
	return int(n), nil
}
