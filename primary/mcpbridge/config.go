package mcpbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/loopback"
)

// Transports a server can be mounted over.
const (
	// TransportStdio runs Command as a subprocess and speaks MCP over its stdin and stdout.
	TransportStdio = "stdio"
	// TransportStreamableHTTP connects to URL with the streamable HTTP transport.
	TransportStreamableHTTP = "streamable_http"
)

// Defaults of ServerConfig.
const (
	DefaultCallTimeout = 60 * time.Second
	DefaultLoadTimeout = 30 * time.Second
)

// DefaultEnvAllow names the variables every stdio server inherits from the primary.
var DefaultEnvAllow = []string{"PATH", "HOME", "LANG"}

// ServerConfig mounts one MCP server as a toolkit. In a configuration file it is one element of
// "servers"; durations are Go duration strings such as "90s".
type ServerConfig struct {
	// Name is the toolkit's name, the selector agents call it by (1..128 characters, no
	// whitespace).
	Name string `json:"name"`
	// Description is shown by discovery before the server is first used.
	Description string `json:"description,omitempty"`
	// Transport is "stdio" or "streamable_http"; empty means stdio when Command is set and
	// streamable_http when URL is.
	Transport string `json:"transport,omitempty"`

	// Command, Args and Dir start a stdio server. Dir empty means the primary's working
	// directory.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	// EnvAllow names variables the server inherits from the primary, in addition to
	// DefaultEnvAllow. Nothing else of the primary's environment reaches it.
	EnvAllow []string `json:"env_allow,omitempty"`
	// Env sets variables to fixed values (they win over inherited ones).
	Env map[string]string `json:"env,omitempty"`

	// URL is the endpoint of a streamable HTTP server; its host must be a loopback address.
	URL string `json:"url,omitempty"`

	// CallTimeout bounds one tools/call, including starting the server when it is not running;
	// a caller's earlier deadline ends the call sooner.
	CallTimeout Duration `json:"call_timeout,omitempty"`
	// LoadTimeout bounds starting the server and reading its tool list.
	LoadTimeout Duration `json:"load_timeout,omitempty"`
}

// Duration is a time.Duration written in JSON as a Go duration string ("60s", "1m30s").
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"60s\": %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Validate checks the configuration and fills defaults (transport, description, timeouts).
func (c *ServerConfig) Validate() error {
	if n := utf8.RuneCountInString(c.Name); n < 1 || n > 128 || !utf8.ValidString(c.Name) ||
		strings.IndexFunc(c.Name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("MCP server name %q must be 1..128 characters without whitespace", c.Name)
	}
	if c.Transport == "" {
		switch {
		case c.Command != "" && c.URL == "":
			c.Transport = TransportStdio
		case c.URL != "" && c.Command == "":
			c.Transport = TransportStreamableHTTP
		default:
			return fmt.Errorf("MCP server %q: set exactly one of command (stdio) and url (streamable_http)", c.Name)
		}
	}
	switch c.Transport {
	case TransportStdio:
		if c.Command == "" {
			return fmt.Errorf("MCP server %q: stdio needs a command", c.Name)
		}
		if c.URL != "" {
			return fmt.Errorf("MCP server %q: stdio takes no url", c.Name)
		}
		for _, name := range c.EnvAllow {
			if name == "" || strings.ContainsAny(name, "=\x00") {
				return fmt.Errorf("MCP server %q: invalid variable name %q in env_allow", c.Name, name)
			}
			if strings.HasPrefix(name, "MINDROOM_") {
				return fmt.Errorf("MCP server %q: %s cannot be passed on: MINDROOM_ variables hold the primary's own settings and credentials", c.Name, name)
			}
		}
		for name := range c.Env {
			if name == "" || strings.ContainsAny(name, "=\x00") {
				return fmt.Errorf("MCP server %q: invalid variable name %q in env", c.Name, name)
			}
		}
	case TransportStreamableHTTP:
		if c.Command != "" || len(c.Args) > 0 || c.Dir != "" || len(c.EnvAllow) > 0 || len(c.Env) > 0 {
			return fmt.Errorf("MCP server %q: streamable_http takes only a url (no command, args, dir or env)", c.Name)
		}
		if err := requireLoopbackURL(c.URL); err != nil {
			return fmt.Errorf("MCP server %q: %w", c.Name, err)
		}
	default:
		return fmt.Errorf("MCP server %q: unknown transport %q (want %q or %q)", c.Name, c.Transport, TransportStdio, TransportStreamableHTTP)
	}
	if c.Description == "" {
		c.Description = fmt.Sprintf("Tools of the MCP server %q.", c.Name)
	}
	if c.CallTimeout < 0 || c.LoadTimeout < 0 {
		return fmt.Errorf("MCP server %q: timeouts must not be negative", c.Name)
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = Duration(DefaultCallTimeout)
	}
	if c.LoadTimeout == 0 {
		c.LoadTimeout = Duration(DefaultLoadTimeout)
	}
	return nil
}

// requireLoopbackURL accepts http(s) URLs whose host is a loopback IP or "localhost".
func requireLoopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("url %q: scheme must be http or https", raw)
	}
	if !loopback.Host(u.Hostname()) {
		return fmt.Errorf("url %q: host must be a loopback address (127.0.0.1, ::1 or localhost)", raw)
	}
	return nil
}

// File is the format of an MCP configuration file:
//
//	{"servers": [
//	  {"name": "files", "command": "/usr/local/bin/files-mcp", "args": ["--root", "/srv"],
//	   "env_allow": ["GITHUB_TOKEN"], "call_timeout": "90s"},
//	  {"name": "search", "url": "http://127.0.0.1:8931/mcp"}
//	]}
type File struct {
	Servers []ServerConfig `json:"servers"`
}

// LoadFile reads an MCP configuration file strictly (unknown fields are errors) and validates
// every server in it.
func LoadFile(path string) ([]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("MCP config: %w", err)
	}
	servers, err := ParseFile(data)
	if err != nil {
		return nil, fmt.Errorf("MCP config %s: %w", path, err)
	}
	return servers, nil
}

// ParseFile parses and validates the contents of an MCP configuration file.
func ParseFile(data []byte) ([]ServerConfig, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the configuration object")
	}
	if err := ValidateAll(f.Servers); err != nil {
		return nil, err
	}
	return f.Servers, nil
}

// ValidateAll validates each server (filling defaults in place) and rejects duplicate names.
func ValidateAll(servers []ServerConfig) error {
	seen := make(map[string]bool, len(servers))
	for i := range servers {
		if err := servers[i].Validate(); err != nil {
			return err
		}
		if seen[servers[i].Name] {
			return fmt.Errorf("MCP server %q is configured twice", servers[i].Name)
		}
		seen[servers[i].Name] = true
	}
	return nil
}
