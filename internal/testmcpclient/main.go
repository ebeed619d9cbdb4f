// Command testmcpclient is the MCP client of end-to-end tests. It starts an MCP server command
// over stdio with the official MCP Go SDK (mcp.NewClient and mcp.CommandTransport), lists the
// server's tools one page at a time, makes the calls it is given, closes the session and
// prints everything it saw as one JSON object on stdout:
//
//	{"protocol_version":…, "pages":[[tool…]…], "calls":[{"name":…,"result":…}…], "close_error":…}
//
// Usage: testmcpclient [-call 'NAME JSON']... -- COMMAND [ARG...]
//
// It exists only to be built and run by tests (primary/e2e); the server's stderr passes through.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// calls collects the -call flags.
type calls []string

func (c *calls) String() string     { return strings.Join(*c, "; ") }
func (c *calls) Set(v string) error { *c = append(*c, v); return nil }

// report is what the client prints.
type report struct {
	ProtocolVersion string        `json:"protocol_version"`
	ServerName      string        `json:"server_name"`
	Pages           [][]*mcp.Tool `json:"pages"`
	Calls           []callReport  `json:"calls"`
	CloseError      string        `json:"close_error"`
}

type callReport struct {
	Name   string              `json:"name"`
	Result *mcp.CallToolResult `json:"result,omitempty"`
	Error  string              `json:"error,omitempty"`
}

func main() {
	var toCall calls
	flag.Var(&toCall, "call", "call NAME with the JSON arguments object after the first space (repeatable)")
	flag.Parse()
	if flag.NArg() == 0 {
		fail(errors.New("usage: testmcpclient [-call 'NAME JSON']... -- COMMAND [ARG...]"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := run(ctx, toCall, flag.Args())
	if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func run(ctx context.Context, toCall []string, command []string) (*report, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "testmcpclient", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	out := &report{ProtocolVersion: session.InitializeResult().ProtocolVersion}
	if info := session.InitializeResult().ServerInfo; info != nil {
		out.ServerName = info.Name
	}
	params := &mcp.ListToolsParams{}
	for {
		page, err := session.ListTools(ctx, params)
		if err != nil {
			session.Close()
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		out.Pages = append(out.Pages, page.Tools)
		if page.NextCursor == "" {
			break
		}
		params = &mcp.ListToolsParams{Cursor: page.NextCursor}
	}
	for _, c := range toCall {
		name, rawArgs, _ := strings.Cut(c, " ")
		var args map[string]any
		if rawArgs != "" {
			if err := json.Unmarshal([]byte(rawArgs), &args); err != nil {
				session.Close()
				return nil, fmt.Errorf("arguments of %s: %w", name, err)
			}
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		cr := callReport{Name: name, Result: res}
		if err != nil {
			cr.Error = err.Error()
		}
		out.Calls = append(out.Calls, cr)
	}
	if err := session.Close(); err != nil {
		out.CloseError = err.Error()
	}
	return out, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testmcpclient:", err)
	os.Exit(1)
}
