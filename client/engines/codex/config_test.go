package codex

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfig(t *testing.T) {
	const common = `# Written by mindroom-agent engine codex for this job on every run.
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
project_doc_max_bytes = 0
`
	const mcp = `
[mcp_servers.mindroom]
command = "/opt/turncli/bin/mindroom-agent"
args = ["mcp"]
env_vars = ["MINDROOM_AGENT_CLI_URL", "MINDROOM_AGENT_CLI_TOKEN", "MINDROOM_AGENT_CLI_WINDOW"]
default_tools_approval_mode = "approve"
tool_timeout_sec = 604800
`
	const off = "\n[analytics]\nenabled = false\n\n[feedback]\nenabled = false\n" +
		"\n[features]\napps = false\nplugins = false\nremote_plugin = false\nplugin_sharing = false\nin_app_updates = false\ntool_suggest = false\n"
	for _, tc := range []struct {
		name string
		s    settings
		want string
	}{
		{"WithoutABaseURLCodexsOwnProvider", settings{mcpCommand: "/opt/turncli/bin/mindroom-agent"}, common + off + mcp},
		{"ABaseURLIsAProviderOfItsOwn", settings{mcpCommand: "/opt/turncli/bin/mindroom-agent", baseURL: "http://127.0.0.1:8080/v1", model: `gpt-"5"`},
			common + "model = \"gpt-\\\"5\\\"\"\nmodel_provider = \"turncli\"\n" + off +
				"\n[model_providers.turncli]\nname = \"turncli\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n" + mcp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeConfig(dir, tc.s); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "config.toml"))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("config.toml:\n%s\nwant:\n%s", b, tc.want)
			}
		})
	}
}
