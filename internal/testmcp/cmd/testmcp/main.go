// Command testmcp serves the testmcp test server (package testmcp) over stdio, with the crash
// tool enabled. Flags: -page-size N; -start-log FILE appends a line per start; -exit-at-start
// exits with status 1 before serving, for crash-loop tests.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/testmcp"
)

func main() {
	pageSize := flag.Int("page-size", 0, "tools/list page size")
	startLog := flag.String("start-log", "", "append a line to this file at every start")
	exitAtStart := flag.Bool("exit-at-start", false, "exit with status 1 before serving")
	flag.Parse()
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
	s := testmcp.NewServer(testmcp.Options{PageSize: *pageSize, Exit: os.Exit})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testmcp:", err)
		os.Exit(1)
	}
}
