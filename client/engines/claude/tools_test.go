package claude

import (
	"encoding/json"
	"testing"
)

func TestPermissionOfAToolUse(t *testing.T) {
	for _, tc := range []struct {
		tool, input, cwd string
		want             permission
	}{
		{"mcp__mindroom__test__echo", `{}`, "/ws", allowed},
		{"mcp__mindroom__permission_prompt", `{}`, "/ws", allowed},
		{"mcp__mindroom__", `{}`, "/ws", askPeople},
		{"mcp__other__tool", `{}`, "/ws", askPeople},
		{"Read", `{"file_path":"/ws/a/b.txt"}`, "/ws", leftToMode},
		{"Read", `{"file_path":"a/b.txt"}`, "/ws", leftToMode},
		{"Read", `{"file_path":"/ws"}`, "/ws", leftToMode},
		{"Read", `{"file_path":"/etc/hostname"}`, "/ws", askPeople},
		{"Read", `{"file_path":"/ws/../etc/hostname"}`, "/ws", askPeople},
		{"Read", `{"file_path":"../ws2/x"}`, "/ws", askPeople},
		{"Read", `{"file_path":"/ws/..x"}`, "/ws", leftToMode},
		{"Read", `{"file_path":"a.txt"}`, "", askPeople},
		{"Grep", `{"pattern":"x","path":"/"}`, "/ws", askPeople},
		{"Grep", `{"pattern":"x"}`, "/ws", leftToMode},
		{"Glob", `{"pattern":"*"}`, "/ws", leftToMode},
		{"NotebookRead", `{"notebook_path":"/tmp/n.ipynb"}`, "/ws", askPeople},
		{"Bash", `{"command":"ls"}`, "/ws", askPeople},
		{"Edit", `{"file_path":"/ws/a"}`, "/ws", askPeople},
		{"Write", `{"file_path":"/ws/a"}`, "/ws", askPeople},
		{"WebFetch", `{"url":"http://x"}`, "/ws", askPeople},
		{"Agent", `{}`, "/ws", askPeople},
	} {
		if got := permissionOf(tc.tool, json.RawMessage(tc.input), tc.cwd); got != tc.want {
			t.Errorf("%s %s in %q: %d, want %d", tc.tool, tc.input, tc.cwd, got, tc.want)
		}
	}
}
