package mcp

import (
	"fmt"
	"strings"
	"testing"
)

func TestMCPToolAnnotations(t *testing.T) {
	conservative := func(title string) string {
		return `{"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":false,"title":"` + title + `"}`
	}
	t.Run("EveryToolClaimsNoLessRiskThanItsTraitsSay", func(t *testing.T) {
		for _, version := range []string{"2025-11-25", "2025-03-26", statelessVersion} {
			f := newFakeAgentCLI(t)
			m := startMCP(t, f.env(), 0)
			params := ""
			if version == statelessVersion {
				params = `{` + statelessMeta("") + `}`
			} else {
				m.initialize(version)
			}
			res := m.result(`1`, "tools/list", params)
			for name, title := range map[string]string{"test__echo": "test.echo", "permission_prompt": "interaction.permission_prompt", "test_deferred__add": "test_deferred.add"} {
				if got := canon(t, toolByName(t, res, name)["annotations"]); got != conservative(title) {
					t.Fatalf("%s: %s annotations %s, want %s", version, name, got, conservative(title))
				}
			}
		}
	})
	t.Run("AnnotationsAreLeftOutBefore20250326", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2024-11-05")
		if tool := toolByName(t, m.result(`1`, "tools/list", ""), "test__echo"); tool["annotations"] != nil {
			t.Fatalf("annotations %v sent to a 2024-11-05 client", tool["annotations"])
		}
	})
	t.Run("HelpShowsEveryHintSent", func(t *testing.T) {
		o := runCLI(t, nil, "", "mcp", "--help")
		help := strings.Join(strings.Fields(o.stdout), " ")
		hints := toolAnnotations(toolRef{"kit", "fn"})
		for key, value := range hints {
			line := fmt.Sprintf("%s %v: no trait says", key, value)
			if key == "title" {
				line = "title TOOLKIT.FUNCTION."
			}
			if !strings.Contains(help, line) {
				t.Errorf("help lacks %q", line)
			}
		}
		if len(hints) != 5 || hints["title"] != "kit.fn" {
			t.Fatalf("hints %v", hints)
		}
	})
}
