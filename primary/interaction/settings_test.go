package interaction

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store/memory"
)

type noProblems struct{}

func (noProblems) Check(context.Context, shellmode.Target) []shellmode.Problem { return nil }

type unisolated struct{}

func (unisolated) JobSandbox(string, string, string) (*sandbox.Job, error) { return nil, nil }

// newService builds the toolkit directly, with real engines and the in-memory store.
func newService(t *testing.T, settings Settings) (*Service, error) {
	t.Helper()
	st := memory.Open(memory.Options{})
	t.Cleanup(func() { st.Close() })
	jm, err := jobs.New(jobs.Config{Store: st, StateDir: t.TempDir(), Sandboxes: unisolated{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(jm.Close)
	shells, err := shellhost.New(shellhost.Config{Settings: shellhost.Settings{AgentBinary: "/bin/true"}, StateDir: t.TempDir(), AgentCLIURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(shells.Close)
	responses := response.NewManager(response.Config{Registry: catalog.NewRegistry()})
	t.Cleanup(responses.CloseAll)
	return New(Config{Settings: settings, Store: st, Jobs: jm, Responses: responses, Shells: shells, Preflight: noProblems{}})
}

// TestAServiceBuiltDirectlyGetsTheSectionsDefaults: New fills a section's zero fields as the
// section's Validate does, keeps a configured one, parses the agent engine the section names
// and refuses one it cannot parse, as the section's Validate does.
func TestAServiceBuiltDirectlyGetsTheSectionsDefaults(t *testing.T) {
	validated := Settings{}
	if err := validated.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(validated, DefaultSettings()) {
		t.Errorf("the validated zero section is %+v, want the defaults %+v", validated, DefaultSettings())
	}
	t.Run("Zero", func(t *testing.T) {
		svc, err := newService(t, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		if got := svc.Prompts.cfg.Settings; !reflect.DeepEqual(got, validated) {
			t.Errorf("the Service holds %+v, want %+v", got, validated)
		}
		if svc.Prompts.engine.Command != "" {
			t.Errorf("engine %q, want none", svc.Prompts.engine.Command)
		}
	})
	t.Run("Configured", func(t *testing.T) {
		svc, err := newService(t, Settings{PromptWait: time.Minute, AgentEngine: "command:echo hi"})
		if err != nil {
			t.Fatal(err)
		}
		if got := svc.Prompts.cfg.Settings.PromptWait; got != time.Minute {
			t.Errorf("prompt wait %v, want the configured 1m0s", got)
		}
		want, err := ParseEngine("command:echo hi")
		if err != nil {
			t.Fatal(err)
		}
		if svc.Background.engine.Command != want.Command || want.Command == "" {
			t.Errorf("engine %q, want %q", svc.Background.engine.Command, want.Command)
		}
	})
	t.Run("UnparsableEngineIsRefused", func(t *testing.T) {
		bad := Settings{AgentEngine: "nonesuch"}
		validateErr := bad.Validate()
		_, err := newService(t, Settings{AgentEngine: "nonesuch"})
		if err == nil || validateErr == nil || err.Error() != "interaction: "+validateErr.Error() {
			t.Errorf("New: %v; want the section's refusal %v, prefixed", err, validateErr)
		}
	})
}

func TestAgentEnvValuesAreWhatTheEngineGets(t *testing.T) {
	t.Setenv("TURNCLI_TEST_ENGINE_KEY", "from-the-environment")
	s := Settings{AgentEnv: []string{"TURNCLI_TEST_ENGINE_KEY", "BASE_URL=http://127.0.0.1:9", "TURNCLI_TEST_UNSET_NAME"}}
	got := s.AgentEnvValues()
	slices.Sort(got)
	if want := []string{"from-the-environment", "http://127.0.0.1:9"}; !slices.Equal(got, want) {
		t.Fatalf("AgentEnvValues() = %q, want %q (an unset name gives nothing)", got, want)
	}
	s.AgentEnv = append(s.AgentEnv, "OPENAI_API_KEY=sk-openai")
	if got := s.AgentCredentials(); !slices.Equal(got, []string{"sk-openai"}) {
		t.Fatalf("AgentCredentials() = %q, want only the value named as a key", got)
	}
}
