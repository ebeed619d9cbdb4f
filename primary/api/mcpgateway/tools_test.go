package mcpgateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// revisions are the MCP revisions the gateway is tested at: the stateless one
// (server/discover) and the last with the initialize handshake.
var revisions = []string{"2026-07-28", "2025-11-25"}

func TestToolsOverBothRevisions(t *testing.T) {
	env := testenv.Start(t)
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			o := open(t, env, func(r *responsev1.OpenResponseRequest) { r.Flags = []string{"progress_report"} })
			cs := connect(t, o, version)
			ctx := context.Background()

			t.Run("ListsCatalogToolsAndControlsWithAnnotations", func(t *testing.T) {
				listed, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				// Claude Code refuses a 2026-07-28 listing without a valid cacheScope.
				if version >= "2026-07-28" && listed.CacheScope != "private" {
					t.Errorf("the listing's cacheScope is %q, want private: it is one response's", listed.CacheScope)
				}
				byName := map[string]*sdk.Tool{}
				for _, tool := range listed.Tools {
					byName[tool.Name] = tool
				}
				for _, name := range []string{"test__echo", "test_deferred__ping", "report_progress", "permission_prompt", "request_approval", "run_in_background"} {
					if byName[name] == nil {
						t.Errorf("tools/list lacks %s", name)
					}
				}
				echo := byName["test__echo"]
				if echo == nil {
					t.FailNow()
				}
				a := echo.Annotations
				if a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || a.IdempotentHint ||
					a.OpenWorldHint == nil || !*a.OpenWorldHint || a.Title != "test.echo" {
					t.Errorf("test__echo's annotations are %+v", a)
				}
				if echo.Title != "test.echo" || echo.Description != "Return the arguments object unchanged.\n\n"+
					"Test toolkit: its functions exist to exercise the Agent CLI and do no real work." {
					t.Errorf("test__echo is titled %q, described %q", echo.Title, echo.Description)
				}
				schema, _ := json.Marshal(echo.InputSchema)
				if !strings.Contains(string(schema), `"type":"object"`) {
					t.Errorf("test__echo's input schema is %s", schema)
				}
			})
			t.Run("CallsACatalogTool", func(t *testing.T) {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test__echo", Arguments: map[string]any{"b": 2, "a": "x"}})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || len(res.Content) != 1 || text(res.Content[0]) != `{"a":"x","b":2}` {
					t.Fatalf("test__echo answered isError %v, %s", res.IsError, contents(res))
				}
				structured, _ := json.Marshal(res.StructuredContent)
				if string(structured) != `{"a":"x","b":2}` {
					t.Errorf("structuredContent is %s", structured)
				}
				if id, _ := res.Meta["mindroom-agent/call_id"].(string); uuid.Validate(id) != nil || res.Meta["mindroom-agent/status"] != "completed" {
					t.Errorf("_meta is %v", res.Meta)
				}
			})
			t.Run("AFailedCallIsAnError", func(t *testing.T) {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test__fail", Arguments: map[string]any{"message": "it broke"}})
				if err != nil {
					t.Fatal(err)
				}
				if !res.IsError || text(res.Content[0]) != "it broke" || res.StructuredContent != nil || res.Meta["mindroom-agent/status"] != "failed" {
					t.Fatalf("test__fail answered isError %v, %s, %v", res.IsError, contents(res), res.Meta)
				}
			})
			t.Run("CallsAnInteractionControl", func(t *testing.T) {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "report_progress", Arguments: map[string]any{
					"title": "Plan", "steps": []any{map[string]any{"id": "one", "title": "First", "status": "in_progress"}},
				}})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || text(res.Content[0]) != "Foreground Slack Plan accepted." {
					t.Fatalf("report_progress answered isError %v, %s", res.IsError, contents(res))
				}
			})
			t.Run("AnUnknownToolIsInvalidParams", func(t *testing.T) {
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "no such tool"})
				if err == nil || !strings.Contains(err.Error(), "Unknown tool") {
					t.Fatalf("an unknown tool = %v", err)
				}
			})
		})
	}
}

// TestOfferedToolsAreTheNativeCatalogs: what the gateway lists is what the response's native
// catalog offers: report_progress only with the progress_report flag, no interaction control
// in a clean response, and every function of a standard shell mode's hidden ones.
func TestOfferedToolsAreTheNativeCatalogs(t *testing.T) {
	env := testenv.Start(t)
	for _, tc := range []struct {
		name    string
		flags   []string
		has     []string
		hasNone []string
	}{
		{"WithoutTheProgressFlagNoReportProgress", nil, []string{"permission_prompt", "test__confirm_echo"}, []string{"report_progress"}},
		{"CleanHasNoInteractionControl", []string{"clean", "progress_report"}, []string{"test__echo"},
			[]string{"report_progress", "permission_prompt", "request_approval", "run_in_background", "run_agent_in_background", "ask_questions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := open(t, env, func(r *responsev1.OpenResponseRequest) {
				r.Flags = tc.flags
				r.ShellMode = responsev1.ShellMode_SHELL_MODE_STANDARD
			})
			listed, err := connect(t, o, revisions[0]).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, tool := range listed.Tools {
				names[tool.Name] = true
			}
			for _, n := range tc.has {
				if !names[n] {
					t.Errorf("%s is not listed", n)
				}
			}
			for _, n := range tc.hasNone {
				if names[n] {
					t.Errorf("%s is listed", n)
				}
			}
		})
	}
}

// TestACredentialCallsInItsOwnResponse: two responses' credentials reach one URL, and each call
// runs in the response whose credential made it.
func TestACredentialCallsInItsOwnResponse(t *testing.T) {
	env := testenv.Start(t)
	for range 2 {
		o := open(t, env)
		res, err := connect(t, o, revisions[0]).CallTool(context.Background(), &sdk.CallToolParams{Name: "test__identity"})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(res.Content[0]); res.IsError || !strings.Contains(got, o.id) {
			t.Fatalf("test.identity through %s's credential answered %s", o.id, got)
		}
	}
}

func text(c sdk.Content) string {
	if tc, ok := c.(*sdk.TextContent); ok {
		return tc.Text
	}
	return ""
}

func contents(res *sdk.CallToolResult) string {
	b, _ := json.Marshal(res.Content)
	return string(b)
}
