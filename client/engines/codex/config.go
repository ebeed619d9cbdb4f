package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Names the driver gives things in Codex's configuration.
const (
	// mcpServerName is turncli's MCP server, as the primary's engine configuration names it.
	mcpServerName = "mindroom"
	// providerName is the model provider written when OPENAI_BASE_URL is set.
	providerName = "turncli"
	// apiKeyEnv and baseURLEnv are the job's variables for the model.
	apiKeyEnv  = "OPENAI_API_KEY"
	baseURLEnv = "OPENAI_BASE_URL"
	modelEnv   = "OPENAI_MODEL"
)

// agentCLIEnv is the Agent CLI environment the MCP server needs: Codex starts MCP servers
// with a reduced environment, so env_vars passes these through.
var agentCLIEnv = []string{"MINDROOM_AGENT_CLI_URL", "MINDROOM_AGENT_CLI_TOKEN", "MINDROOM_AGENT_CLI_WINDOW"}

// toolTimeoutSec bounds one MCP tool call. A call may wait for people as long as the primary
// lets it; this only keeps Codex (default: one minute) from giving up first.
const toolTimeoutSec = 7 * 24 * 3600

// offlineFeatures are Codex features that reach services of their own (ChatGPT apps and
// connectors, plugin marketplaces, update checks) rather than the model: a background agent
// uses none of them, and its job talks to the model's endpoint only.
var offlineFeatures = []string{"apps", "plugins", "remote_plugin", "plugin_sharing", "in_app_updates", "tool_suggest"}

// settings is what config.toml says that varies by job.
type settings struct {
	// mcpCommand is the executable that serves `mcp`: the driver's own.
	mcpCommand string
	baseURL    string
	model      string
}

// writeConfig writes dir/config.toml, replacing what a previous run left.
func writeConfig(dir string, s settings) error {
	var b bytes.Buffer
	b.WriteString("# Written by mindroom-agent engine codex for this job on every run.\n")
	// The thread asks for these too; the file keeps any other path into the server in line.
	line(&b, "approval_policy", "on-request")
	line(&b, "sandbox_mode", "workspace-write")
	b.WriteString("check_for_update_on_startup = false\n")
	// The repository's AGENTS.md files are not the brief.
	b.WriteString("project_doc_max_bytes = 0\n")
	if s.model != "" {
		line(&b, "model", s.model)
	}
	if s.baseURL != "" {
		line(&b, "model_provider", providerName)
	}
	b.WriteString("\n[analytics]\nenabled = false\n\n[feedback]\nenabled = false\n")
	b.WriteString("\n[features]\n")
	for _, f := range offlineFeatures {
		fmt.Fprintf(&b, "%s = false\n", f)
	}
	if s.baseURL != "" {
		fmt.Fprintf(&b, "\n[model_providers.%s]\n", providerName)
		line(&b, "name", providerName)
		line(&b, "base_url", s.baseURL)
		line(&b, "wire_api", "responses")
		line(&b, "env_key", apiKeyEnv)
	}
	fmt.Fprintf(&b, "\n[mcp_servers.%s]\n", mcpServerName)
	line(&b, "command", s.mcpCommand)
	fmt.Fprintf(&b, "args = [%s]\n", tomlString("mcp"))
	quoted := make([]string, len(agentCLIEnv))
	for i, v := range agentCLIEnv {
		quoted[i] = tomlString(v)
	}
	fmt.Fprintf(&b, "env_vars = [%s]\n", strings.Join(quoted, ", "))
	line(&b, "default_tools_approval_mode", "approve")
	fmt.Fprintf(&b, "tool_timeout_sec = %d\n", toolTimeoutSec)
	return os.WriteFile(filepath.Join(dir, "config.toml"), b.Bytes(), 0o600)
}

func line(b *bytes.Buffer, key, value string) {
	fmt.Fprintf(b, "%s = %s\n", key, tomlString(value))
}

// tomlString quotes s as a TOML basic string. JSON's escapes are a subset of TOML's, so a JSON
// string literal is one.
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
