package worker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/worker"
)

func TestWorkerConfigValidate(t *testing.T) {
	valid := func() worker.Config {
		return worker.Config{PrimaryAddr: "127.0.0.1:7420", Credential: "c", Key: "key-a", ID: "w1", StateDir: t.TempDir(), Shells: shellhost.Settings{AgentBinary: "/bin/true"}}
	}
	cases := []struct {
		name    string
		edit    func(*worker.Config)
		wantErr string
	}{
		{"CompleteConfigIsValid", func(*worker.Config) {}, ""},
		{"LocalhostProxyIsValid", func(c *worker.Config) { c.ProxyListen = "localhost:0" }, ""},
		{"IPv6LoopbackProxyIsValid", func(c *worker.Config) { c.ProxyListen = "[::1]:0" }, ""},
		{"MissingPrimaryIsInvalid", func(c *worker.Config) { c.PrimaryAddr = "" }, "primary address"},
		{"MissingCredentialIsInvalid", func(c *worker.Config) { c.Credential = "" }, "credential"},
		{"MissingKeyIsInvalid", func(c *worker.Config) { c.Key = "" }, "key"},
		{"MissingIDIsInvalid", func(c *worker.Config) { c.ID = "" }, "id"},
		{"IDOver128CharactersIsInvalid", func(c *worker.Config) { c.ID = strings.Repeat("w", 129) }, "id"},
		{"MissingStateDirIsInvalid", func(c *worker.Config) { c.StateDir = "" }, "state dir"},
		{"ProxyOnAllInterfacesIsInvalid", func(c *worker.Config) { c.ProxyListen = "0.0.0.0:0" }, "loopback"},
		{"ProxyOnAHostNameIsInvalid", func(c *worker.Config) { c.ProxyListen = "example.org:80" }, "loopback"},
		{"MissingAgentBinaryIsInvalid", func(c *worker.Config) { c.Shells.AgentBinary = "" }, "agent binary"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.edit(&c)
			err := c.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate = %v, want an error about %q", err, tc.wantErr)
			}
		})
	}

	t.Run("DefaultsAreFilledIn", func(t *testing.T) {
		c := valid()
		c.StateDir = "relative-state"
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(c.StateDir, "/") || c.ProxyListen != "127.0.0.1:0" || c.Shells.DefaultTimeout != 10*time.Minute ||
			c.Shells.MaxTimeout != time.Hour || c.Shells.Grace != 5*time.Second || c.MinBackoff <= 0 || c.MaxBackoff < c.MinBackoff || c.Logger == nil {
			t.Errorf("defaults = %+v", c)
		}
	})
}
