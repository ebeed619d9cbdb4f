package main

import (
	"context"
	"flag"
	"fmt"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

var conversationModes = map[string]operatorv1.Mode{
	"ask": operatorv1.Mode_MODE_ASK, "auto": operatorv1.Mode_MODE_AUTO, "admin": operatorv1.Mode_MODE_ADMIN,
}

var shellModes = map[string]operatorv1.ShellMode{
	"standard": operatorv1.ShellMode_SHELL_MODE_STANDARD, "minimal": operatorv1.ShellMode_SHELL_MODE_MINIMAL,
}

var modeCommands = []command{
	{noun: "modes", verb: "get", summary: "show a conversation's mode (ask, auto or admin)", setup: func(fs *flag.FlagSet) runner {
		var conv conversationFlags
		conv.register(fs)
		return online(func(ctx context.Context, c *cli, _ []string) error {
			where, err := conv.required()
			if err != nil {
				return err
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.GetConversationMode(ctx, &operatorv1.GetConversationModeRequest{Conversation: where})
			if err != nil {
				return err
			}
			return showModeSetting(c, resp.GetSetting())
		})
	}},
	{noun: "modes", verb: "set", args: arity{"MODE"}, summary: "set a conversation's mode: ask, auto or admin (admins)", setup: func(fs *flag.FlagSet) runner {
		var conv conversationFlags
		conv.register(fs)
		return online(func(ctx context.Context, c *cli, args []string) error {
			where, err := conv.required()
			if err != nil {
				return err
			}
			mode, ok := conversationModes[args[0]]
			if !ok {
				return fmt.Errorf("%w: MODE must be ask, auto or admin", errUsage)
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.SetConversationMode(ctx, &operatorv1.SetConversationModeRequest{Conversation: where, Mode: mode})
			if err != nil {
				return err
			}
			return showModeSetting(c, resp.GetSetting())
		})
	}},
}

func showModeSetting(c *cli, s *operatorv1.ModeSetting) error {
	if c.global.json {
		return c.emit(s)
	}
	return c.fields("mode", enumName(s.GetMode().String(), "MODE_"), "updated", at(s.GetUpdatedAt()), "updated by", s.GetUpdatedBy())
}

// shellTarget is the --agent and conversation a shell mode is about.
type shellTarget struct {
	conv  conversationFlags
	agent string
}

func (t *shellTarget) register(fs *flag.FlagSet) {
	t.conv.register(fs)
	fs.StringVar(&t.agent, "agent", "", "the agent (required)")
}

func (t *shellTarget) check() error {
	if t.agent == "" {
		return fmt.Errorf("%w: --agent is required", errUsage)
	}
	_, err := t.conv.required()
	return err
}

var shellModeCommands = []command{
	{noun: "shell", verb: "get", summary: "show an agent's shell mode in a conversation", setup: func(fs *flag.FlagSet) runner {
		var t shellTarget
		t.register(fs)
		return online(func(ctx context.Context, c *cli, _ []string) error {
			if err := t.check(); err != nil {
				return err
			}
			where, _ := t.conv.required()
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.GetShellMode(ctx, &operatorv1.GetShellModeRequest{Conversation: where, AgentName: t.agent})
			if err != nil {
				return err
			}
			return showShellMode(c, resp.GetSetting())
		})
	}},
	{noun: "shell", verb: "set", args: arity{"MODE"}, summary: "set an agent's shell mode in a conversation: standard or minimal (admins);\nminimal is refused with every problem the preflight finds", setup: func(fs *flag.FlagSet) runner {
		var t shellTarget
		t.register(fs)
		workerKey := fs.String("worker-key", "", "the worker key the agent's shell runs on (empty: the primary)")
		return online(func(ctx context.Context, c *cli, args []string) error {
			if err := t.check(); err != nil {
				return err
			}
			mode, ok := shellModes[args[0]]
			if !ok {
				return fmt.Errorf("%w: MODE must be standard or minimal", errUsage)
			}
			where, _ := t.conv.required()
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.SetShellMode(ctx, &operatorv1.SetShellModeRequest{Conversation: where, AgentName: t.agent, Mode: mode, WorkerKey: *workerKey})
			if err != nil {
				return err
			}
			return showShellMode(c, resp.GetSetting())
		})
	}},
	{noun: "shell", verb: "reset", summary: "forget an agent's shell mode in a conversation: the default applies again (admins)", setup: func(fs *flag.FlagSet) runner {
		var t shellTarget
		t.register(fs)
		return online(func(ctx context.Context, c *cli, _ []string) error {
			if err := t.check(); err != nil {
				return err
			}
			where, _ := t.conv.required()
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.ResetShellMode(ctx, &operatorv1.ResetShellModeRequest{Conversation: where, AgentName: t.agent})
			if err != nil {
				return err
			}
			return showShellMode(c, resp.GetSetting())
		})
	}},
}

func showShellMode(c *cli, s *operatorv1.ShellModeSetting) error {
	if c.global.json {
		return c.emit(s)
	}
	return c.fields("shell mode", enumName(s.GetMode().String(), "SHELL_MODE_"), "updated", at(s.GetUpdatedAt()), "updated by", s.GetUpdatedBy())
}
