package main

import (
	"io"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

func TestShellFlagsDescribeTheResponse(t *testing.T) {
	t.Setenv("USER", "ada")
	t.Setenv("MINDROOM_STATE_DIR", "")
	for _, tc := range []struct {
		name  string
		args  []string
		state string
		want  *responsev1.OpenResponseRequest
	}{
		{"DefaultsAreAForegroundTerminalTurnInTheStoredMode", nil, ".turncli", &responsev1.OpenResponseRequest{
			AgentName: "demo", RequesterId: "ada", Origin: responsev1.Origin_ORIGIN_FOREGROUND,
			Conversation: &conversationv1.Conversation{Channel: "terminal"},
		}},
		{"EveryFieldARuntimeGives", []string{"--state-dir", "/tmp/s", "--agent", "coder", "--requester", "@alice:example.org",
			"--channel", "!room", "--thread", "t1", "--shell-mode", "minimal", "--worker-key", "local", "--origin", "scheduled",
			"--flag", "requester_trusted", "--flag", "progress_report, clean"}, "/tmp/s", &responsev1.OpenResponseRequest{
			AgentName: "coder", RequesterId: "@alice:example.org", ShellMode: responsev1.ShellMode_SHELL_MODE_MINIMAL,
			WorkerKey: "local", Origin: responsev1.Origin_ORIGIN_SCHEDULED, Flags: []string{"requester_trusted", "progress_report", "clean"},
			Conversation: &conversationv1.Conversation{Channel: "!room", Thread: "t1"},
		}},
		{"StandardModeIsNamed", []string{"--shell-mode", "standard"}, ".turncli", &responsev1.OpenResponseRequest{
			AgentName: "demo", RequesterId: "ada", ShellMode: responsev1.ShellMode_SHELL_MODE_STANDARD,
			Origin: responsev1.Origin_ORIGIN_FOREGROUND, Conversation: &conversationv1.Conversation{Channel: "terminal"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, got, err := shellFlags(tc.args, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if state != tc.state {
				t.Errorf("state dir %q, want %q", state, tc.state)
			}
			if !proto.Equal(got, tc.want) {
				t.Errorf("request\n got %v\nwant %v", prototext.Format(got), prototext.Format(tc.want))
			}
		})
	}
}

func TestShellFlagMistakesExitTwo(t *testing.T) {
	for name, args := range map[string][]string{
		"UnknownShellMode": {"--shell-mode", "clean"},
		"UnknownOrigin":    {"--origin", "cron"},
		"UnknownFlag":      {"--mode", "minimal"},
		"ExtraArgument":    {"bash"},
	} {
		t.Run(name, func(t *testing.T) {
			if code, _, stderr := runCmd(append([]string{"shell"}, args...)...); code != 2 || stderr == "" {
				t.Fatalf("exit %d, stderr %q; want 2 with a message", code, stderr)
			}
		})
	}
}
