package responseapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/api/responseapi"
	"github.com/turncli/turncli/primary/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var bashSeq atomic.Int64

// listed runs `mindroom-agent tools list` in real Bash inside the response and returns its items
// as "toolkit.function" (a deferred toolkit as "toolkit.*").
func listed(t *testing.T, env *testenv.Env, responseID string) []string {
	t.Helper()
	run := env.RunBash(t, responseID, fmt.Sprintf("list-%d", bashSeq.Add(1)), "mindroom-agent tools list --limit 1000")
	if run.Result.GetExitCode() != 0 {
		t.Fatalf("tools list: exit %d %s %s", run.Result.GetExitCode(), run.Stdout, run.Stderr)
	}
	var page struct {
		Items []struct{ Toolkit, Function string } `json:"items"`
	}
	if err := json.Unmarshal([]byte(run.Stdout), &page); err != nil {
		t.Fatalf("tools list output %q: %v", run.Stdout, err)
	}
	var out []string
	for _, it := range page.Items {
		if it.Function == "" {
			it.Function = "*"
		}
		out = append(out, it.Toolkit+"."+it.Function)
	}
	return out
}

// withTraits are the built-in functions the standard mode hides; report_progress has no trait.
var withTraits = []string{
	"shell.run_shell_command", "shell.check_shell_command", "shell.kill_shell_command",
	"interaction.run_in_background", "interaction.run_agent_in_background", "interaction.request_approval",
	"interaction.permission_prompt", "interaction.ask_questions",
}

func openReq(mode responsev1.ShellMode) *responsev1.OpenResponseRequest {
	return &responsev1.OpenResponseRequest{
		AgentName: "tester", RequesterId: "@alice:example.org",
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$thread"},
		ShellMode:    mode,
		Flags:        []string{"progress_report", "requester_trusted"},
	}
}

func TestShellModeCatalogsFromRealBash(t *testing.T) {
	env := testenv.Start(t)
	for _, tc := range []struct {
		name      string
		mode      responsev1.ShellMode
		offersAll bool
	}{
		{"StandardHidesFunctionsWithTraits", responsev1.ShellMode_SHELL_MODE_STANDARD, false},
		{"MinimalOffersEveryFunction", responsev1.ShellMode_SHELL_MODE_MINIMAL, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := env.Open(t, func(r *responsev1.OpenResponseRequest) { *r = *openReq(tc.mode) })
			items := listed(t, env, id)
			for _, f := range withTraits {
				if slices.Contains(items, f) != tc.offersAll {
					t.Errorf("%s listed = %v, want %v; listed: %v", f, !tc.offersAll, tc.offersAll, items)
				}
			}
			if !slices.Contains(items, "interaction.report_progress") {
				t.Errorf("report_progress, which finishes in the command, is not listed: %v", items)
			}
			run := env.RunBash(t, id, fmt.Sprintf("call-%d", bashSeq.Add(1)),
				`mindroom-agent tools call shell.run_shell_command '{"command":"echo nested"}'`)
			if called := run.Result.GetExitCode() == 0 && strings.Contains(run.Stdout, "nested"); called != tc.offersAll {
				t.Errorf("calling run_shell_command: exit %d %s %s", run.Result.GetExitCode(), run.Stdout, run.Stderr)
			}
		})
	}
}

func TestStoredShellModeAppliesToTheNextResponseOnly(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	api := newAPI(t, env, &recordingPreflight{})
	open := func(t *testing.T, mode responsev1.ShellMode) string {
		t.Helper()
		resp, err := api.OpenResponse(ctx, openReq(mode))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
		})
		return resp.GetResponseId()
	}
	mode := func(t *testing.T, id string) string {
		t.Helper()
		r, ok := env.Primary.Internals().Responses.Get(id)
		if !ok {
			t.Fatalf("response %s is not open", id)
		}
		return r.Inspect(0).ShellMode
	}
	setStored := func(t *testing.T, m store.ShellMode) {
		t.Helper()
		if _, err := env.Primary.Internals().Store.SetShellMode(ctx, "!room:example.org", "$thread", "tester", m, "", "ada"); err != nil {
			t.Fatal(err)
		}
	}

	before := open(t, responsev1.ShellMode_SHELL_MODE_UNSPECIFIED)
	if got := mode(t, before); got != "standard" {
		t.Fatalf("with nothing stored the response is %s, want standard", got)
	}
	setStored(t, store.ShellModeMinimal)
	after := open(t, responsev1.ShellMode_SHELL_MODE_UNSPECIFIED)
	explicit := open(t, responsev1.ShellMode_SHELL_MODE_STANDARD)
	for id, want := range map[string]string{before: "standard", after: "minimal", explicit: "standard"} {
		if got := mode(t, id); got != want {
			t.Errorf("response %s is %s, want %s", id, got, want)
		}
	}
	if items := listed(t, env, before); slices.Contains(items, "shell.run_shell_command") {
		t.Errorf("the response open before the change now lists the shell toolkit: %v", items)
	}
	if items := listed(t, env, after); !slices.Contains(items, "shell.run_shell_command") {
		t.Errorf("the response opened after the change does not list the shell toolkit: %v", items)
	}

	setStored(t, store.ShellModeStandard)
	if got := mode(t, after); got != "minimal" {
		t.Errorf("storing standard changed an open minimal response to %s", got)
	}
	if items := listed(t, env, after); !slices.Contains(items, "shell.run_shell_command") {
		t.Errorf("the open minimal response lost the shell toolkit: %v", items)
	}
	if _, err := env.Primary.Internals().Store.SetShellMode(ctx, "!room:example.org", "$thread", "other-agent", store.ShellModeMinimal, "", "ada"); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, open(t, responsev1.ShellMode_SHELL_MODE_UNSPECIFIED)); got != "standard" {
		t.Errorf("another agent's stored mode applied: %s", got)
	}
}

// newAPI is the ResponseService handlers over env's primary with pf as the preflight, as the
// primary builds them.
func newAPI(t *testing.T, env *testenv.Env, pf responseapi.Preflight) *responseapi.Server {
	t.Helper()
	p := env.Primary
	api, err := responseapi.NewServer(responseapi.Config{
		Responses: p.Internals().Responses, Preflight: pf, ShellModes: p.Internals().Store,
		StopThread: func(ctx context.Context, channel, thread string) (int, error) {
			cancelled, err := p.Internals().Interaction.Questions.CancelThreadQuestions(ctx, channel, thread)
			return len(cancelled), err
		},
		MCPPath: "/mcp",
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// TestAFunctionTheStandardModeHidesSaysHowToReachIt: calling or describing, from a standard
// shell, a function only the mode hides answers one message saying it is offered natively and
// which operator command offers it in the shell, for the response's own placement.
func TestAFunctionTheStandardModeHidesSaysHowToReachIt(t *testing.T) {
	env := testenv.Start(t)
	env.StartWorker(t, "key-a", "w1")
	const explain = "interaction.run_in_background is not offered in this shell: its shell mode is standard, which offers only " +
		"functions that finish inside the command. It is offered to you natively, as a direct tool call: call it that way instead. " +
		"To have it in this shell too, an admin sets the minimal shell mode for this agent in this conversation with: " +
		"turncli shell set minimal --agent tester --channel '!room:example.org' --thread '$thread'"
	for _, tc := range []struct{ name, workerKey, want string }{
		{"OnThePrimary", "", explain},
		{"OnAWorker", "key-a", explain + " --worker-key key-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := env.Open(t, func(r *responsev1.OpenResponseRequest) {
				*r = *openReq(responsev1.ShellMode_SHELL_MODE_STANDARD)
				r.WorkerKey = tc.workerKey
			})
			run := env.RunBash(t, id, fmt.Sprintf("call-%d", bashSeq.Add(1)),
				`mindroom-agent tools call interaction.run_in_background '{"command":"true"}'`)
			var receipt struct{ Status, Outcome string }
			if err := json.Unmarshal([]byte(run.Stdout), &receipt); err != nil || run.Result.GetExitCode() != 1 {
				t.Fatalf("call: exit %d, stdout %q: %v", run.Result.GetExitCode(), run.Stdout, err)
			}
			if receipt.Status != "failed" || receipt.Outcome != tc.want {
				t.Errorf("call: %s %q\nwant failed %q", receipt.Status, receipt.Outcome, tc.want)
			}
			run = env.RunBash(t, id, fmt.Sprintf("describe-%d", bashSeq.Add(1)),
				`mindroom-agent tools describe interaction.run_in_background`)
			var refusal struct{ Error string }
			if err := json.Unmarshal([]byte(run.Stdout), &refusal); err != nil || run.Result.GetExitCode() != 2 {
				t.Fatalf("describe: exit %d, stdout %q: %v", run.Result.GetExitCode(), run.Stdout, err)
			}
			if want := "Agent CLI request was rejected: " + tc.want; refusal.Error != want {
				t.Errorf("describe: %q\nwant %q", refusal.Error, want)
			}
		})
	}
}
