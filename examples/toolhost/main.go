// Command toolhost is a runnable example tool host: it serves the toolkit "example" (add, greet,
// pause) to a turncli primary through package hostkit.
//
// To try it, start a primary with `make run` (its state, including the runtime credential,
// goes under .turncli/). In a second terminal start this host:
//
//	go run ./examples/toolhost --token-file .turncli/credentials/runtime.token
//
// Once it logs "toolkits registered", open a shell with `make shell` in a third terminal (a
// response sees the toolkits registered before it opened) and use the toolkit like any other:
//
//	mindroom-agent tools search example
//	mindroom-agent tools describe example.add
//	mindroom-agent tools call example.add '{"a":2,"b":40}'
//	mindroom-agent tools call example.greet
//	mindroom-agent tools call example.pause '{"seconds":5}' --timeout 0   # then: calls get <call_id>
//
// `calls get` shows "waiting" while pause waits. greet answers with the agent and requester of
// the response, which the primary supplies: arguments cannot change them. Stop the host with
// Ctrl-C: it drains (calls still running get a few seconds to finish) and the toolkit stays
// listed but unavailable until the host runs again. Start it again and it takes the toolkit
// back, even for shells already open.
//
// main is wiring only: flags (with environment fallbacks) → hostkit.Config → hostkit.Host.Run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/turncli/turncli/hostkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("toolhost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg hostkit.Config
	var tokenFile, logLevel string
	fs.StringVar(&cfg.Address, "primary", env("MINDROOM_PRIMARY_ADDR", "127.0.0.1:7420"), "primary gRPC address (env MINDROOM_PRIMARY_ADDR)")
	fs.StringVar(&tokenFile, "token-file", env("MINDROOM_RUNTIME_TOKEN_FILE", ".turncli/credentials/runtime.token"), "file holding the runtime credential (env MINDROOM_RUNTIME_TOKEN_FILE, or the credential itself in MINDROOM_RUNTIME_TOKEN)")
	fs.StringVar(&cfg.HostID, "id", os.Getenv("MINDROOM_TOOLHOST_ID"), "stable id of this host (env MINDROOM_TOOLHOST_ID, default <hostname>:<pid>)")
	fs.StringVar(&logLevel, "log-level", env("MINDROOM_LOG_LEVEL", "info"), "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cfg.Token = os.Getenv("MINDROOM_RUNTIME_TOKEN")
	if cfg.Token == "" {
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			fmt.Fprintln(stderr, "toolhost: runtime credential:", err)
			return 2
		}
		cfg.Token = strings.TrimSpace(string(data))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		fmt.Fprintln(stderr, "toolhost: log level:", err)
		return 2
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg.StopGrace = 5 * time.Second

	host, err := hostkit.New(cfg, exampleToolkit())
	if err != nil {
		fmt.Fprintln(stderr, "toolhost:", err)
		return 2
	}
	if err := host.Run(ctx); err != nil {
		cfg.Logger.Error("tool host failed", "err", err)
		return 1
	}
	return 0
}

// AddInput is the arguments of example.add; its JSON Schema is derived from the struct.
type AddInput struct {
	A float64 `json:"a" description:"First addend."`
	B float64 `json:"b" description:"Second addend."`
}

// AddOutput is the result of example.add.
type AddOutput struct {
	Sum float64 `json:"sum"`
}

// GreetInput is the arguments of example.greet.
type GreetInput struct {
	Greeting string `json:"greeting,omitempty" description:"How to greet; default \"Hello\"."`
}

// PauseInput is the arguments of example.pause.
type PauseInput struct {
	Seconds int `json:"seconds" description:"How long to wait, 1..300 seconds."`
}

func exampleToolkit() hostkit.Toolkit {
	add := hostkit.Func("add", "Add two numbers.", func(_ context.Context, _ hostkit.Call, in AddInput) (AddOutput, error) {
		return AddOutput{Sum: in.A + in.B}, nil
	})
	greet := hostkit.Func("greet", "Greet the person the agent is replying to.", func(_ context.Context, c hostkit.Call, in GreetInput) (string, error) {
		greeting := in.Greeting
		if greeting == "" {
			greeting = "Hello"
		}
		return fmt.Sprintf("%s %s, from agent %s in %s", greeting, c.Identity.Requester, c.Identity.Agent, c.Identity.Channel), nil
	})
	pause := hostkit.Func("pause", "Wait the given number of seconds, reporting waiting meanwhile.", func(ctx context.Context, c hostkit.Call, in PauseInput) (map[string]int, error) {
		if in.Seconds < 1 || in.Seconds > 300 {
			return nil, errors.New("seconds must be between 1 and 300")
		}
		c.Waiting()
		timer := time.NewTimer(time.Duration(in.Seconds) * time.Second)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return nil, errors.New("pause cancelled")
		case <-timer.C:
		}
		c.Running()
		return map[string]int{"paused_seconds": in.Seconds}, nil
	})
	return hostkit.Toolkit{
		Name:         "example",
		Description:  "Example toolkit served by examples/toolhost: add, greet, pause.",
		Instructions: []string{"These functions are a demonstration of a tool host; they have no side effects."},
		Functions:    []hostkit.Function{add, greet, pause},
	}
}
