package interaction_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// Flags that would let an unattended agent act without anyone's permission or outside its
// sandbox: no built-in engine may ever be started with one.
var bypassFlags = []string{
	"--dangerously-skip-permissions", "--allow-dangerously-skip-permissions", "bypassPermissions", "dontAsk",
	"--yolo", "--dangerously-bypass-approvals-and-sandbox", "--full-auto", "danger-full-access",
}

// standInEngine is what internal/testengine recorded of one start: its arguments and its
// environment.
type standInEngine struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
}

func (e standInEngine) flag(name string) (string, bool) {
	i := slices.Index(e.Args, name)
	if i < 0 || i+1 >= len(e.Args) {
		return "", false
	}
	return e.Args[i+1], true
}

// configs returns the values of its -c options.
func (e standInEngine) configs() map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(e.Args); i++ {
		if e.Args[i] == "-c" {
			k, v, _ := strings.Cut(e.Args[i+1], "=")
			out[k] = v
		}
	}
	return out
}

func (e standInEngine) env(name string) string {
	for _, kv := range e.Env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// noBypass fails if any argument is or names a bypass flag.
func (e standInEngine) noBypass(t *testing.T) {
	t.Helper()
	for _, arg := range e.Args {
		for _, bad := range bypassFlags {
			if strings.Contains(arg, bad) {
				t.Errorf("engine started with %q: %q", bad, e.Args)
			}
		}
	}
}

// installStandIns builds internal/testengine and installs it as claude and codex in a fresh
// directory, which it puts first on the PATH the primary's shells inherit. It returns the
// directory.
func installStandIns(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "claude")
	build := exec.Command("go", "build", "-o", bin, "github.com/turncli/turncli/internal/testengine")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build testengine: %v\n%s", err, out)
	}
	b, err := os.ReadFile(bin)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "codex"), b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// startWithEngine starts a primary whose background agents run the built-in engine, found as
// the stand-in first on the shells' PATH. It returns the primary and the stand-ins' directory.
func startWithEngine(t *testing.T, engine string) (*testenv.Env, string) {
	t.Helper()
	dir := installStandIns(t)
	env := start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Interaction.AgentEngine = engine
		c.Shells.EnvAllow = []string{"LANG", "PATH"}
	}))
	return env, dir
}

// recorded reads what the stand-in engine recorded of its start.
func recorded(t *testing.T, dir, engine string) standInEngine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, engine+".json"))
	if err != nil {
		t.Fatalf("the %s engine never started: %v", engine, err)
	}
	var e standInEngine
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%s record: %v", engine, err)
	}
	return e
}

// continuationFeed is the runtime's continuation stream, read in the background.
type continuationFeed chan *continuationv1.Continuation

// subscribeContinuations opens the runtime's continuation stream, as a runtime does.
func subscribeContinuations(t *testing.T, env *testenv.Env) continuationFeed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := continuationv1.NewContinuationServiceClient(env.Conn).Subscribe(ctx, &continuationv1.SubscribeRequest{})
	if err != nil {
		cancel()
		t.Fatalf("subscribe to continuations: %v", err)
	}
	feed := make(continuationFeed, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := stream.Recv()
			if err != nil {
				return
			}
			feed <- msg.GetContinuation()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return feed
}

// await returns the continuation with the key. The bound only keeps a broken test from hanging.
func (f continuationFeed) await(t *testing.T, key string) *continuationv1.Continuation {
	t.Helper()
	bound := time.NewTimer(waitBound)
	defer bound.Stop()
	for {
		select {
		case c := <-f:
			if c.GetIdempotencyKey() == key {
				return c
			}
		case <-bound.C:
			t.Fatalf("no continuation %s within %v", key, waitBound)
		}
	}
}

// operatorWatch is an operator's live feed, read in the background.
type operatorWatch chan *operatorv1.Event

// watchAsOperator opens the operator's live feed and returns once the watch is in place.
func watchAsOperator(t *testing.T, api operatorv1.OperatorServiceClient) operatorWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := api.WatchEvents(ctx, &operatorv1.WatchEventsRequest{})
	if err == nil {
		_, err = stream.Recv() // the watch is in place
	}
	if err != nil {
		cancel()
		t.Fatalf("watch events: %v", err)
	}
	w := make(operatorWatch, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := stream.Recv()
			if err != nil {
				return
			}
			w <- msg.GetEvent()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// promptCreated returns the next prompt posted, as the operator API shows it.
func (w operatorWatch) promptCreated(t *testing.T, api operatorv1.OperatorServiceClient) *operatorv1.Prompt {
	t.Helper()
	bound := time.NewTimer(waitBound)
	defer bound.Stop()
	for {
		select {
		case ev := <-w:
			if ev.GetKind() != "prompt.created" {
				continue
			}
			var data struct {
				ID uint64 `json:"id"`
			}
			if err := json.Unmarshal([]byte(ev.GetDataJson()), &data); err != nil {
				t.Fatalf("event %s: %v", ev.GetDataJson(), err)
			}
			got, err := api.GetPrompt(context.Background(), &operatorv1.GetPromptRequest{PromptId: data.ID})
			if err != nil {
				t.Fatalf("get prompt %d: %v", data.ID, err)
			}
			return got.GetPrompt()
		case <-bound.C:
			t.Fatalf("no prompt posted within %v", waitBound)
		}
	}
}

// TestClaudeEngine runs background agents with the built-in claude engine, a stand-in Claude
// Code that records how it was started and asks for permission through the MCP server of its
// --mcp-config exactly as Claude Code does, and checks the flags, that the request reached the
// operators, and that their decision reached the engine.
func TestClaudeEngine(t *testing.T) {
	env, dir := startWithEngine(t, "claude")
	addAuthors(t, env)
	api := operatorClient(t, env, firstAdminToken(t, env))
	reports := subscribeContinuations(t, env)
	watch := watchAsOperator(t, api)

	for _, tc := range []struct {
		name, thread, author string
		mode                 store.Mode
		action               operatorv1.Decision
		reason               string
		decision             string
	}{
		{"AMembersAgentAsksTheOperatorsAndGetsTheirAllowance", "$claude-ask", stranger, store.ModeAsk,
			operatorv1.Decision_DECISION_ALLOW_ONCE, "",
			`{"behavior":"allow","updatedInput":{"command":"rm -rf build","description":"Remove the build directory"}}`},
		{"AnAdminsAgentInAnAdminConversationAlsoRunsAtTheAutoTierAndGetsTheirDenial", "$claude-admin", adminAuthor, store.ModeAdmin,
			operatorv1.Decision_DECISION_DENY, "Keep the build directory.",
			`{"behavior":"deny","message":"Keep the build directory."}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setMode(t, env, tc.thread, tc.mode)
			parent := openAs(t, env, tc.author, tc.thread)
			jobID := startAgent(t, env, parent, "clean the build", "cleaner")

			p := watch.promptCreated(t, api)
			if p.GetKind() != operatorv1.PromptKind_PROMPT_KIND_PERMISSION || p.GetStatus() != operatorv1.PromptStatus_PROMPT_STATUS_PENDING ||
				p.GetToolName() != "Bash" || p.GetToolUseId() != "toolu_stand_in_01" ||
				p.GetMaskedInputJson() != `{"command":"rm -rf build","description":"Remove the build directory"}` ||
				p.GetConversation().GetThread() != tc.thread || p.GetRequester() != tc.author || p.GetResponseId() == parent {
				t.Errorf("operators see %v", p)
			}
			if _, err := api.DecidePrompt(context.Background(), &operatorv1.DecidePromptRequest{
				PromptId: p.GetId(), Decision: tc.action, Text: tc.reason,
			}); err != nil {
				t.Fatalf("decide: %v", err)
			}

			c := reports.await(t, jobKey(jobID))
			if !c.GetPost() || !strings.Contains(c.GetText(), "\npermission decision: "+tc.decision) {
				t.Errorf("report does not carry the decision %s:\n%s", tc.decision, c.GetText())
			}

			e := recorded(t, dir, "claude")
			if len(e.Args) < 2 || e.Args[0] != "-p" || !strings.HasSuffix(e.Args[1], "Task:\nclean the build") {
				t.Errorf("claude is not started headless with the brief as its prompt: %q", e.Args)
			}
			var mcpConfig map[string]any
			if v, _ := e.flag("--mcp-config"); json.Unmarshal([]byte(v), &mcpConfig) != nil ||
				!jsonEqual(mcpConfig, map[string]any{"mcpServers": map[string]any{"mindroom": map[string]any{"command": "mindroom-agent", "args": []any{"mcp"}}}}) {
				t.Errorf("--mcp-config %q, want mindroom-agent mcp as server mindroom", v)
			}
			for flag, want := range map[string]string{
				"--permission-prompt-tool": "mcp__mindroom__permission_prompt",
				"--permission-mode":        "default",
				"--output-format":          "text",
			} {
				if got, _ := e.flag(flag); got != want {
					t.Errorf("%s %q, want %q", flag, got, want)
				}
			}
			if interaction.PermissionPromptTool != "mcp__mindroom__permission_prompt" || !slices.Contains(e.Args, "--strict-mcp-config") {
				t.Errorf("args %q", e.Args)
			}
			e.noBypass(t)
			// mindroom-agent mcp reads the Agent CLI environment the job gets.
			for _, name := range []string{"MINDROOM_AGENT_CLI_URL", "MINDROOM_AGENT_CLI_TOKEN", "MINDROOM_AGENT_CLI_WINDOW", interaction.TaskEnv} {
				if e.env(name) == "" {
					t.Errorf("the engine's environment has no %s", name)
				}
			}
		})
	}
}

// TestCodexEngine runs a background agent with the built-in codex engine, a stand-in Codex that
// records how it was started and lists the tools of the MCP server its -c options configure,
// started with the reduced environment Codex gives MCP servers.
func TestCodexEngine(t *testing.T) {
	env, dir := startWithEngine(t, "codex")
	addAuthors(t, env)
	reports := subscribeContinuations(t, env)
	const thread = "$codex-admin"
	setMode(t, env, thread, store.ModeAdmin) // an admin's agent in an admin conversation, too
	parent := openAs(t, env, adminAuthor, thread)
	jobID := startAgent(t, env, parent, "count the files", "counter")

	c := reports.await(t, jobKey(jobID))
	_, listed, _ := strings.Cut(c.GetText(), "\ntools: ")
	listed, _, _ = strings.Cut(listed, "\n")
	names := strings.Split(listed, ",")
	if !c.GetPost() || !slices.Contains(names, "permission_prompt") || !slices.Contains(names, "run_in_background") || !slices.Contains(names, "test__echo") {
		t.Errorf("codex did not reach the response's catalog through its MCP server:\n%s", c.GetText())
	}

	e := recorded(t, dir, "codex")
	if len(e.Args) < 2 || e.Args[0] != "exec" || !strings.HasSuffix(e.Args[len(e.Args)-1], "Task:\ncount the files") {
		t.Errorf("codex is not started as codex exec with the brief as its prompt: %q", e.Args)
	}
	if sandbox, _ := e.flag("--sandbox"); sandbox != "workspace-write" || !slices.Contains(e.Args, "--skip-git-repo-check") {
		t.Errorf("args %q, want --sandbox workspace-write", e.Args)
	}
	want := map[string]string{
		"approval_policy":                                  `"never"`,
		"mcp_servers.mindroom.command":                     `"mindroom-agent"`,
		"mcp_servers.mindroom.args":                        `["mcp"]`,
		"mcp_servers.mindroom.env_vars":                    `["MINDROOM_AGENT_CLI_URL","MINDROOM_AGENT_CLI_TOKEN","MINDROOM_AGENT_CLI_WINDOW"]`,
		"mcp_servers.mindroom.default_tools_approval_mode": `"approve"`,
		"mcp_servers.mindroom.tool_timeout_sec":            `3600`,
	}
	if got := e.configs(); !jsonEqual(got, want) {
		t.Errorf("-c options %v, want %v", got, want)
	}
	e.noBypass(t)
}
