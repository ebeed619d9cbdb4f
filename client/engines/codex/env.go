package codex

// passedEnv is what the CLI gets of the job's environment: what a shell and the commands Codex
// runs need to behave (paths, identity, locale, terminal), the Agent CLI environment for the
// MCP server, and the model's variables. Anything else the job holds stays with the driver.
var passedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "TERM", "LANG", "LC_ALL", "LC_CTYPE",
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
