package codex

// passedEnv is what the CLI gets of the job's environment: what a shell and the commands Codex
// runs need to behave (paths, identity, locale, terminal), how to reach the model (proxies,
// certificate authorities, the API key), and the Agent CLI environment for the MCP server.
// Anything else the job holds stays with the driver.
var passedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "TERM", "LANG", "LC_ALL", "LC_CTYPE",
	"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "all_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	apiKeyEnv,
}

// cliEnv is the environment of `codex app-server`.
func cliEnv(getenv func(string) string, codexHome string) []string {
	env := []string{"CODEX_HOME=" + codexHome}
	for _, name := range append(append([]string(nil), passedEnv...), agentCLIEnv...) {
		if v := getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}
