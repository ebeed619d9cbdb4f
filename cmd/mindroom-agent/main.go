// Command mindroom-agent lists, searches, describes and calls the tools of the agent response
// whose grant is in its environment. All behaviour lives in package client.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/turncli/turncli/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := client.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
