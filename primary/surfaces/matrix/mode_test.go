package matrix

import "testing"

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		name, body  string
		agent, mode string
		isCommand   bool
	}{
		{"MinimalForAnAgent", "!mode coder minimal", "coder", "minimal", true},
		{"StandardWithSpaces", "  !mode  coder   standard \n", "coder", "standard", true},
		{"UnknownModeIsMalformed", "!mode coder fast", "", "", true},
		{"MissingModeIsMalformed", "!mode coder", "", "", true},
		{"ExtraWordIsMalformed", "!mode coder minimal now", "", "", true},
		{"ModeIsCaseSensitive", "!mode coder Minimal", "", "", true},
		{"OtherPrefixIsNoCommand", "!modes coder minimal", "", "", false},
		{"ChatIsNoCommand", "set !mode coder minimal", "", "", false},
		{"EmptyIsNoCommand", "", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent, mode, isCommand := parseMode(tc.body)
			if agent != tc.agent || mode != tc.mode || isCommand != tc.isCommand {
				t.Fatalf("parseMode(%q) = %q, %q, %v; want %q, %q, %v", tc.body, agent, mode, isCommand, tc.agent, tc.mode, tc.isCommand)
			}
		})
	}
}

func TestReactionSign(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		want      int
	}{
		{"CheckMark", "✅", 1},
		{"HeavyCheckWithSelector", "✔\uFE0F", 1},
		{"ThumbsUpWithSkinTone", "👍🏽", 1},
		{"CrossMark", "❌", -1},
		{"ThumbsDown", "👎", -1},
		{"Eyes", "👀", 0},
		{"CheckAndMore", "✅✅", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reactionSign(tc.key); got != tc.want {
				t.Fatalf("reactionSign(%q) = %d, want %d", tc.key, got, tc.want)
			}
		})
	}
}
