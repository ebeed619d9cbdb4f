// Command testmcp serves the testmcp test server (package testmcp) over stdio, with the crash
// tool enabled. Flags: -page-size N; -start-log FILE appends a line per start; -exit-at-start
// exits with status 1 before serving, for crash-loop tests; -odd-tools adds the tools a client
// must leave out (Options.OddTools); -schema-depths 63,64 adds depth_63 and depth_64
// (Options.SchemaDepths); -protocol-versions 2025-11-25 serves only the revisions listed
// (Options.ProtocolVersions).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/testmcp"
)

func main() {
	pageSize := flag.Int("page-size", 0, "tools/list page size")
	startLog := flag.String("start-log", "", "append a line to this file at every start")
	exitAtStart := flag.Bool("exit-at-start", false, "exit with status 1 before serving")
	oddTools := flag.Bool("odd-tools", false, "add the tools a client must leave out one at a time")
	schemaDepths := flag.String("schema-depths", "", "comma-separated depths of depth_<d> tools to add")
	protocolVersions := flag.String("protocol-versions", "", "comma-separated MCP revisions to serve, and no others")
	flag.Parse()
	var versions []string
	for _, v := range strings.FieldsFunc(*protocolVersions, func(r rune) bool { return r == ',' }) {
		if !slices.Contains(mcp.SupportedProtocolVersions(), v) {
			fmt.Fprintf(os.Stderr, "testmcp: -protocol-versions: %q is not a revision the SDK serves\n", v)
			os.Exit(2)
		}
		versions = append(versions, v)
	}
	var depths []int
	for _, field := range strings.FieldsFunc(*schemaDepths, func(r rune) bool { return r == ',' }) {
		d, err := strconv.Atoi(field)
		if err != nil || d < 3 {
			fmt.Fprintf(os.Stderr, "testmcp: -schema-depths: %q is not a depth of at least 3\n", field)
			os.Exit(2)
		}
		depths = append(depths, d)
	}
	if *startLog != "" {
		f, err := os.OpenFile(*startLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testmcp:", err)
			os.Exit(1)
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	if *exitAtStart {
		fmt.Fprintln(os.Stderr, "testmcp: exiting at start as asked")
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "testmcp: serving on stdio")
	s := testmcp.NewServer(testmcp.Options{PageSize: *pageSize, Exit: os.Exit, OddTools: *oddTools, SchemaDepths: depths,
		ProtocolVersions: versions})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testmcp:", err)
		os.Exit(1)
	}
}
