// Command testengine stands in for Claude Code (installed as `claude`) and Codex (installed as
// `codex`) in tests of the built-in background agent engines. It records how it was started,
// then does what the real engine does with the MCP server its flags configure, through the
// official MCP Go SDK (initialize, tools/list, tools/call over the server's stdio), and prints
// what it got as its final message, which is the agent's report:
//
//   - It first writes {"args":[…],"env":[…]} to its own path with ".json" added.
//   - claude: takes the server from --mcp-config (inline JSON or a file) and starts it with its
//     own environment plus the server's "env". Like Claude Code it refuses to start when the
//     tool --permission-prompt-tool names (mcp__<server>__<tool>) is not listed, and it calls
//     that tool with a permission request for a Bash command, as Claude Code does before it
//     runs a tool that needs permission. It prints "permission decision: <result text>".
//   - codex: takes the server from -c mcp_servers.<name>.{command,args,env_vars} and starts it
//     with the reduced environment Codex gives MCP servers (a few basic variables, plus those
//     env_vars names). It prints "tools: <the listed names, comma-separated>".
//
// Failures are printed on standard output too (the engines' standard error is not part of a
// report), with exit status 1. It exists only to be built and run by tests; it never talks to
// a model.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// permissionRequest is the arguments the stand-in claude sends to its permission tool.
var permissionRequest = map[string]any{
	"tool_name":   "Bash",
	"input":       map[string]any{"command": "rm -rf build", "description": "Remove the build directory"},
	"tool_use_id": "toolu_stand_in_01",
}

// codexServerEnv is what Codex passes to an MCP server of its own accord on Unix.
var codexServerEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"}

func main() {
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	if err := record(self + ".json"); err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var report string
	switch name := filepath.Base(self); name {
	case "claude":
		report, err = claude(ctx, os.Args[1:])
	case "codex":
		report, err = codex(ctx, os.Args[1:])
	default:
		err = fmt.Errorf("installed as %q; want claude or codex", name)
	}
	if err != nil {
		fail(err)
	}
	fmt.Println(report)
}

// record writes the arguments and the environment.
func record(path string) error {
	b, err := json.Marshal(map[string]any{"args": os.Args[1:], "env": os.Environ()})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// serverConfig is one MCP server of an engine's configuration.
type serverConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

func claude(ctx context.Context, args []string) (string, error) {
	mcpConfig, ok := flagValue(args, "--mcp-config")
	if !ok {
		return "", errors.New("no --mcp-config")
	}
	tool, ok := flagValue(args, "--permission-prompt-tool")
	if !ok {
		return "", errors.New("no --permission-prompt-tool")
	}
	server, toolName, ok := strings.Cut(strings.TrimPrefix(tool, "mcp__"), "__")
	if !ok || !strings.HasPrefix(tool, "mcp__") {
		return "", fmt.Errorf("--permission-prompt-tool %q is not an MCP tool name", tool)
	}
	text := []byte(mcpConfig)
	if !strings.HasPrefix(strings.TrimSpace(mcpConfig), "{") {
		var err error
		if text, err = os.ReadFile(mcpConfig); err != nil {
			return "", err
		}
	}
	var cfg struct {
		MCPServers map[string]serverConfig `json:"mcpServers"`
	}
	if err := json.Unmarshal(text, &cfg); err != nil {
		return "", fmt.Errorf("--mcp-config: %w", err)
	}
	sc, ok := cfg.MCPServers[server]
	if !ok {
		return "", fmt.Errorf("--mcp-config has no server %q", server)
	}
	env := os.Environ()
	for k, v := range sc.Env {
		env = append(env, k+"="+v)
	}
	session, names, err := connect(ctx, sc, env)
	if err != nil {
		return "", err
	}
	defer session.Close()
	if !slices.Contains(names, toolName) {
		return "", fmt.Errorf("MCP tool %s (passed via --permission-prompt-tool) not found; the server lists %v", tool, names)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: toolName, Arguments: permissionRequest})
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("%s answered an error or no decision: %+v", tool, res)
	}
	decision, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("%s answered %T, not text", tool, res.Content[0])
	}
	return "permission decision: " + decision.Text, nil
}

func codex(ctx context.Context, args []string) (string, error) {
	if len(args) == 0 || args[0] != "exec" {
		return "", errors.New("want codex exec")
	}
	servers := map[string]*serverConfig{}
	envVars := map[string][]string{}
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "-c" && args[i] != "--config" {
			continue
		}
		key, value, _ := strings.Cut(args[i+1], "=")
		rest, ok := strings.CutPrefix(key, "mcp_servers.")
		name, field, dotted := strings.Cut(rest, ".")
		if !ok || !dotted {
			continue
		}
		if servers[name] == nil {
			servers[name] = &serverConfig{}
		}
		var err error
		switch field {
		case "command":
			servers[name].Command = tomlString(value)
		case "args":
			err = json.Unmarshal([]byte(value), &servers[name].Args)
		case "env_vars":
			var names []string
			err = json.Unmarshal([]byte(value), &names)
			envVars[name] = names
		}
		if err != nil {
			return "", fmt.Errorf("-c %s: %w", args[i+1], err)
		}
	}
	if len(servers) != 1 {
		return "", fmt.Errorf("want one MCP server, configured %d", len(servers))
	}
	var out []string
	for name, sc := range servers {
		var env []string
		for _, k := range append(slices.Clone(codexServerEnv), envVars[name]...) {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
		session, names, err := connect(ctx, *sc, env)
		if err != nil {
			return "", fmt.Errorf("server %s: %w", name, err)
		}
		session.Close()
		out = append(out, names...)
	}
	return "tools: " + strings.Join(out, ","), nil
}

// connect starts the server with env and lists its tools.
func connect(ctx context.Context, sc serverConfig, env []string) (*mcp.ClientSession, []string, error) {
	cmd := exec.Command(sc.Command, sc.Args...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "testengine", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	var names []string
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			session.Close()
			return nil, nil, fmt.Errorf("tools/list: %w", err)
		}
		names = append(names, tool.Name)
	}
	return session, names, nil
}

// flagValue returns the argument after the flag.
func flagValue(args []string, flag string) (string, bool) {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

// tomlString reads a TOML basic string, or, as Codex does, a value that is no TOML at all as
// the string itself.
func tomlString(v string) string {
	var s string
	if err := json.Unmarshal([]byte(v), &s); err == nil {
		return s
	}
	return v
}

func fail(err error) {
	fmt.Println("testengine:", err)
	fmt.Fprintln(os.Stderr, "testengine:", err)
	os.Exit(1)
}
