package mcpbridge

import (
	"strings"
	"testing"
	"time"
)

func TestMCPServerConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     ServerConfig
		wantErr string
		check   func(t *testing.T, c ServerConfig)
	}{
		{name: "CommandImpliesStdioAndDefaultsAreFilled", cfg: ServerConfig{Name: "files", Command: "files-mcp"},
			check: func(t *testing.T, c ServerConfig) {
				if c.Transport != TransportStdio || time.Duration(c.CallTimeout) != DefaultCallTimeout ||
					time.Duration(c.LoadTimeout) != DefaultLoadTimeout || c.Description == "" {
					t.Errorf("config = %+v", c)
				}
			}},
		{name: "URLImpliesStreamableHTTP", cfg: ServerConfig{Name: "s", URL: "http://127.0.0.1:8931/mcp"},
			check: func(t *testing.T, c ServerConfig) {
				if c.Transport != TransportStreamableHTTP {
					t.Errorf("transport = %q", c.Transport)
				}
			}},
		{name: "LocalhostIsAccepted", cfg: ServerConfig{Name: "s", URL: "http://localhost:1/mcp"}},
		{name: "IPv6LoopbackIsAccepted", cfg: ServerConfig{Name: "s", URL: "https://[::1]:1/mcp"}},
		{name: "NonLoopbackURLIsRefused", cfg: ServerConfig{Name: "s", URL: "http://10.0.0.1:80/mcp"}, wantErr: "loopback"},
		{name: "HostNameURLIsRefused", cfg: ServerConfig{Name: "s", URL: "http://example.org/mcp"}, wantErr: "loopback"},
		{name: "NonHTTPSchemeIsRefused", cfg: ServerConfig{Name: "s", URL: "file:///tmp/x"}, wantErr: "scheme"},
		{name: "CommandAndURLTogetherAreRefused", cfg: ServerConfig{Name: "s", Command: "x", URL: "http://127.0.0.1:1/"}, wantErr: "exactly one"},
		{name: "HTTPWithEnvIsRefused", cfg: ServerConfig{Name: "s", Transport: TransportStreamableHTTP, URL: "http://127.0.0.1:1/", EnvAllow: []string{"X"}}, wantErr: "only a url"},
		{name: "UnknownTransportIsRefused", cfg: ServerConfig{Name: "s", Transport: "sse", URL: "http://127.0.0.1:1/"}, wantErr: "unknown transport"},
		{name: "NameWithSpaceIsRefused", cfg: ServerConfig{Name: "my server", Command: "x"}, wantErr: "without whitespace"},
		{name: "EmptyNameIsRefused", cfg: ServerConfig{Command: "x"}, wantErr: "1..128"},
		{name: "InvalidEnvNameIsRefused", cfg: ServerConfig{Name: "s", Command: "x", EnvAllow: []string{"A=B"}}, wantErr: "invalid variable"},
		{name: "NegativeTimeoutIsRefused", cfg: ServerConfig{Name: "s", Command: "x", CallTimeout: Duration(-time.Second)}, wantErr: "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate() = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if tc.check != nil {
				tc.check(t, tc.cfg)
			}
		})
	}
}

func TestMCPConfigFile(t *testing.T) {
	t.Run("ServersAreReadWithDurations", func(t *testing.T) {
		servers, err := ParseFile([]byte(`{"servers":[
			{"name":"files","description":"Project files","command":"files-mcp","args":["--root","/srv"],
			 "dir":"/srv","env_allow":["GITHUB_TOKEN"],"env":{"MODE":"ro"},"call_timeout":"90s","load_timeout":"1m"},
			{"name":"search","transport":"streamable_http","url":"http://127.0.0.1:8931/mcp"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if len(servers) != 2 {
			t.Fatalf("servers = %+v", servers)
		}
		f := servers[0]
		if f.Transport != TransportStdio || time.Duration(f.CallTimeout) != 90*time.Second ||
			time.Duration(f.LoadTimeout) != time.Minute || f.Env["MODE"] != "ro" || f.EnvAllow[0] != "GITHUB_TOKEN" {
			t.Errorf("files = %+v", f)
		}
		if servers[1].URL != "http://127.0.0.1:8931/mcp" {
			t.Errorf("search = %+v", servers[1])
		}
	})
	for _, tc := range []struct{ name, data, wantErr string }{
		{"UnknownFieldIsRefused", `{"servers":[{"name":"a","command":"x","cmd":"y"}]}`, "unknown field"},
		{"DuplicateNameIsRefused", `{"servers":[{"name":"a","command":"x"},{"name":"a","command":"y"}]}`, "twice"},
		{"NumericDurationIsRefused", `{"servers":[{"name":"a","command":"x","call_timeout":60}]}`, "duration"},
		{"TrailingDataIsRefused", `{"servers":[]} {}`, "after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ParseFile = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestMCPServerEnvIsTheAllowlistAndFixedValuesOnly(t *testing.T) {
	primaryEnv := map[string]string{"PATH": "/bin", "HOME": "/home/p", "SECRET": "s3cret", "TOKEN": "t", "MODE": "rw"}
	lookup := func(name string) (string, bool) { v, ok := primaryEnv[name]; return v, ok }
	got := serverEnv(ServerConfig{EnvAllow: []string{"TOKEN", "PATH"}, Env: map[string]string{"MODE": "ro", "Z": "1"}}, lookup)
	want := []string{"PATH=/bin", "HOME=/home/p", "TOKEN=t", "MODE=ro", "Z=1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("env = %q, want %q", got, want)
	}
	if got := serverEnv(ServerConfig{}, func(string) (string, bool) { return "", false }); got == nil || len(got) != 0 {
		t.Errorf("empty env = %#v, want a non-nil empty slice", got)
	}
}
