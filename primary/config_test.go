package primary

import (
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/primary/ha"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/listen"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/workerhub"
)

// TestValidateIsIdempotent: Run validates and New validates again; the second changes nothing.
func TestValidateIsIdempotent(t *testing.T) {
	cfg := Config{StateDir: "relative-state", Shells: shellhost.Settings{AgentBinary: "/bin/true"}, Interaction: interaction.Settings{AgentEngine: "test"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	once := cfg
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(once, cfg) {
		t.Fatalf("a second Validate changed the configuration:\n%+v\nwant\n%+v", cfg, once)
	}
	if once.Jobs.CommandCeiling != jobs.DefaultCommandCeiling || once.Interaction.PromptWait != interaction.DefaultPromptWait {
		t.Fatalf("Validate did not fill the sections' defaults: %+v %+v", once.Jobs, once.Interaction)
	}
}

// TestFlagDefaultsAreTheSectionsDefaults: a primary started with no flag and no environment
// is configured exactly as one built in code with every section left zero, since both take
// their defaults from the sections.
func TestFlagDefaultsAreTheSectionsDefaults(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "MINDROOM_") || strings.HasPrefix(name, "TURNCLI_") {
			t.Setenv(name, "")
		}
	}
	var flags Config
	fs := flag.NewFlagSet("primary", flag.ContinueOnError)
	flags.BindFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if flags.StateDir != DefaultStateDir || flags.Listen != listen.Defaults() || !slices.Equal(flags.Shells.EnvAllow, shellhost.DefaultEnvAllow) {
		t.Fatalf("flag defaults: state dir %q, listen %+v, env allow %q", flags.StateDir, flags.Listen, flags.Shells.EnvAllow)
	}
	if flags.Responses != response.DefaultSettings() || !reflect.DeepEqual(flags.Interaction, interaction.DefaultSettings()) ||
		flags.Workers.Liveness != workerhub.DefaultLiveness() || flags.HA != ha.Defaults() || flags.Connections != DefaultConnections() {
		t.Fatalf("flag defaults differ from the sections' defaults:\n%+v\n%+v\n%+v\n%+v\n%+v", flags.Responses, flags.Interaction, flags.Workers.Liveness, flags.HA, flags.Connections)
	}
	flags.Shells.AgentBinary = "/bin/true"
	code := Config{StateDir: DefaultStateDir, Shells: shellhost.Settings{AgentBinary: "/bin/true"}}
	for _, c := range []*Config{&flags, &code} {
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []struct {
		name            string
		fromFlags, zero any
	}{
		{"responses", flags.Responses, code.Responses},
		{"jobs", flags.Jobs, code.Jobs},
		{"interaction", flags.Interaction, code.Interaction},
		{"workers", flags.Workers, code.Workers},
		{"ha", flags.HA, code.HA},
		{"connections", flags.Connections, code.Connections},
		{"shell bounds", []any{flags.Shells.DefaultTimeout, flags.Shells.MaxTimeout, flags.Shells.Grace}, []any{code.Shells.DefaultTimeout, code.Shells.MaxTimeout, code.Shells.Grace}},
	} {
		if !reflect.DeepEqual(s.fromFlags, s.zero) {
			t.Errorf("%s: from the flags %+v, left zero %+v", s.name, s.fromFlags, s.zero)
		}
	}
}

func TestSectionsRefuseWhatCannotWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"NoAgentBinary", func(c *Config) { c.Shells.AgentBinary = "" }, "agent binary is required"},
		{"AgentCLIOffLoopback", func(c *Config) { c.Listen.AgentCLI = "192.0.2.1:7422" },
			`agent cli listener must be a loopback address: "192.0.2.1:7422" is not a loopback address`},
		{"HalfATLSPair", func(c *Config) { c.Listen.TLSCertFile = "cert.pem" }, "TLS needs both a certificate and a key file"},
		{"FastCallBudgetOverItsMaximum", func(c *Config) { c.Responses.FastCallBudget = response.MaxFastCallBudget + 1 },
			"fast call budget 1.000000001s is over its maximum 1s"},
		{"NegativeJobCeiling", func(c *Config) { c.Jobs.CommandCeiling = -1 }, "job ceilings and grace cannot be negative"},
		{"UnknownEngine", func(c *Config) { c.Interaction.AgentEngine = "nope" }, "agent engine: "},
		{"BadWorkerKey", func(c *Config) { c.Workers.Credentials.Keys = []string{"a/b"} }, `worker key "a/b": use 1..64 letters, digits, '.', '_' or '-'`},
		{"ActiveStandbyOnSQLite", func(c *Config) { c.HA.Enabled = true },
			"active/standby primaries need a PostgreSQL store (a postgres:// store URL)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{StateDir: t.TempDir(), Shells: shellhost.Settings{AgentBinary: "/bin/true"}}
			tc.edit(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || (!strings.HasSuffix(tc.want, " ") && err.Error() != tc.want) {
				t.Fatalf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
}
