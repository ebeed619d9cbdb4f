package main

import (
	"context"
	"flag"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

var conversationModes = map[string]operatorv1.Mode{
	"ask": operatorv1.Mode_MODE_ASK, "auto": operatorv1.Mode_MODE_AUTO, "admin": operatorv1.Mode_MODE_ADMIN,
}

var shellModes = map[string]operatorv1.ShellMode{
	"standard": operatorv1.ShellMode_SHELL_MODE_STANDARD, "minimal": operatorv1.ShellMode_SHELL_MODE_MINIMAL,
}

var modeCommands = []command{
	listCommand("conversations", "list the conversations the primary holds records of, most recently active first",
		[]string{"CONVERSATION", "MODE", "LAST ACTIVITY"},
		func(s *operatorv1.ConversationSummary) []string {
			mode := "-" // never set: the default applies
			if s.GetMode().GetMode() != operatorv1.Mode_MODE_UNSPECIFIED {
				mode = word(s.GetMode().GetMode())
			}
			return []string{conversationText(s.GetConversation()), mode, when(s.GetLastActivityAt())}
		},
		func(*flag.FlagSet) fetchPage[*operatorv1.ConversationSummary] {
			return func(ctx context.Context, c *cli, size uint32, _ string) ([]*operatorv1.ConversationSummary, string, error) {
				resp, err := c.api.ListConversations(ctx, &operatorv1.ListConversationsRequest{PageSize: size})
				return resp.GetConversations(), "", err // one page: the most recently active
			}
		}),
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
				return usagef("MODE must be one of %s", wordList(conversationModes))
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
	return c.fields("mode", word(s.GetMode()), "updated", at(s.GetUpdatedAt()), "updated by", s.GetUpdatedBy())
}

// shellTarget is the agent and conversation a shell mode is about.
type shellTarget struct {
	where *conversationv1.Conversation
	agent string
}

var shellModeCommands = []command{
	shellModeCommand("get", nil, "show an agent's shell mode in a conversation", noFlags(
		func(ctx context.Context, c *cli, t shellTarget, _ []string) (*operatorv1.ShellModeSetting, error) {
			resp, err := c.api.GetShellMode(ctx, &operatorv1.GetShellModeRequest{Conversation: t.where, AgentName: t.agent})
			return resp.GetSetting(), err
		})),
	shellModeCommand("set", arity{"MODE"}, "set an agent's shell mode in a conversation: standard or minimal (admins);\nminimal is refused with every problem the preflight finds",
		func(fs *flag.FlagSet) shellModeCall {
			workerKey := fs.String("worker-key", "", "the worker key the agent's shell runs on (empty: the primary)")
			return func(ctx context.Context, c *cli, t shellTarget, args []string) (*operatorv1.ShellModeSetting, error) {
				mode, ok := shellModes[args[0]]
				if !ok {
					return nil, usagef("MODE must be one of %s", wordList(shellModes))
				}
				resp, err := c.api.SetShellMode(ctx, &operatorv1.SetShellModeRequest{Conversation: t.where, AgentName: t.agent, Mode: mode, WorkerKey: *workerKey})
				return resp.GetSetting(), err
			}
		}),
	shellModeCommand("reset", nil, "forget an agent's shell mode in a conversation: the default applies again (admins)", noFlags(
		func(ctx context.Context, c *cli, t shellTarget, _ []string) (*operatorv1.ShellModeSetting, error) {
			resp, err := c.api.ResetShellMode(ctx, &operatorv1.ResetShellModeRequest{Conversation: t.where, AgentName: t.agent})
			return resp.GetSetting(), err
		})),
}

// shellModeCall is what one shell command does for the agent and conversation it is about.
type shellModeCall = func(ctx context.Context, c *cli, t shellTarget, args []string) (*operatorv1.ShellModeSetting, error)

// shellModeCommand is `shell VERB`: it takes --agent and the conversation, both required, and
// prints the setting its call returns.
func shellModeCommand(verb string, args arity, summary string, setup func(fs *flag.FlagSet) shellModeCall) command {
	return command{noun: "shell", verb: verb, args: args, summary: summary, setup: func(fs *flag.FlagSet) runner {
		var conv conversationFlags
		conv.register(fs)
		agent := fs.String("agent", "", "the agent (required)")
		call := setup(fs)
		return online(func(ctx context.Context, c *cli, args []string) error {
			if *agent == "" {
				return usageError("--agent is required")
			}
			where, err := conv.required()
			if err != nil {
				return err
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			setting, err := call(ctx, c, shellTarget{where: where, agent: *agent}, args)
			if err != nil {
				return err
			}
			return showShellMode(c, setting)
		})
	}}
}

func showShellMode(c *cli, s *operatorv1.ShellModeSetting) error {
	if c.global.json {
		return c.emit(s)
	}
	return c.fields("shell mode", word(s.GetMode()), "applies on", placement(s), "updated", at(s.GetUpdatedAt()), "updated by", s.GetUpdatedBy())
}

// placement says where a stored shell mode applies: the primary's own shells or a worker key's;
// nothing for the default, which applies everywhere.
func placement(s *operatorv1.ShellModeSetting) string {
	switch {
	case s.GetUpdatedAt() == nil:
		return ""
	case s.GetUnplaced():
		return "nowhere until set again (stored before placements were recorded)"
	case s.GetWorkerKey() != "":
		return "worker key " + s.GetWorkerKey()
	}
	return "the primary"
}
