package claude_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/turncli/turncli/client/engines"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/enginetest"
	"github.com/turncli/turncli/internal/scriptedmodel/messages"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// waitBound bounds every wait of these tests: a run of the real CLI takes seconds.
const waitBound = 2 * time.Minute

// pollEvery paces the polls of the primary's state.
const pollEvery = 20 * time.Millisecond

// rig is a primary, a response of it and the claude CLI, for running the driver as a real
// Bash command of the response: with the real mindroom-agent, its Agent CLI environment
// and the primary's interaction engine behind its hook.
type rig struct {
	env      *testenv.Env
	response string
	cliDir   string
	egress   *enginetest.Egress
}

func newRig(t *testing.T) *rig {
	t.Helper()
	cli := enginetest.Claude(t)
	env := testenv.Start(t)
	return &rig{env: env, response: env.Open(t), cliDir: filepath.Dir(cli), egress: startEgress(t)}
}

// engineRun is one run of `mindroom-agent engine claude`.
type engineRun struct {
	model *messages.Server
	// dir is the working directory, home the engine home (both made when empty).
	dir, home string
	task      string
	// env adds variables (resume, decision, caps, hook wait).
	env map[string]string
	// pidFile, when set, receives the driver's process id.
	pidFile string
	// noCLI leaves the claude CLI off PATH.
	noCLI bool
}

var bashSeq atomic.Int64

// output is a command's output as it arrives.
type output struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out.String()
}

// started is a driver run in progress.
type started struct {
	out    *output
	bashID string
	done   chan error
	exit   atomic.Int32
}

// start runs the driver in a new Bash command of the response and returns at once.
func (r *rig) start(t *testing.T, run *engineRun) *started {
	t.Helper()
	if run.dir == "" {
		run.dir = t.TempDir()
	}
	if run.home == "" {
		run.home = t.TempDir()
	}
	vars := map[string]string{
		"ANTHROPIC_BASE_URL": run.model.URL, "ANTHROPIC_API_KEY": "scripted-model-key",
		"HOME":          t.TempDir(),
		engines.TaskEnv: run.task, engines.HomeEnv: run.home,
	}
	for k, v := range r.egress.ProxyEnv() {
		vars[k] = v
	}
	for k, v := range run.env {
		vars[k] = v
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	var cmd strings.Builder
	fmt.Fprintf(&cmd, "cd %s && export", quote(run.dir))
	if !run.noCLI {
		fmt.Fprintf(&cmd, " PATH=\"$PATH\":%s", quote(r.cliDir))
	}
	for _, k := range names {
		fmt.Fprintf(&cmd, " %s=%s", k, quote(vars[k]))
	}
	if run.pidFile == "" {
		cmd.WriteString(" && mindroom-agent engine claude")
	} else {
		fmt.Fprintf(&cmd, " && { mindroom-agent engine claude & echo $! >%s; wait $!; }", quote(run.pidFile))
	}

	s := &started{out: &output{}, bashID: fmt.Sprintf("bash-%d", bashSeq.Add(1)), done: make(chan error, 1)}
	s.exit.Store(-1)
	go func() { s.done <- r.runBash(s, cmd.String()) }()
	return s
}

// runBash runs command as Bash call s.bashID, collecting its output in s as it arrives.
func (r *rig) runBash(s *started, command string) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	stream, err := r.env.Runtime.RunBash(ctx, &responsev1.RunBashRequest{
		ResponseId: r.response, BashCallId: s.bashID, Command: command, Timeout: durationpb.New(waitBound),
	})
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch ev := msg.GetEvent().(type) {
		case *responsev1.RunBashResponse_Output:
			if ev.Output.GetStream() != responsev1.OutputStream_OUTPUT_STREAM_STDERR {
				s.out.mu.Lock()
				s.out.out.Write(ev.Output.GetData())
				s.out.mu.Unlock()
			}
		case *responsev1.RunBashResponse_Result:
			s.exit.Store(ev.Result.GetExitCode())
		}
	}
}

// wait waits for the Bash command to end and returns the driver's result and progress.
func (s *started) wait(t *testing.T) (engines.Result, string) {
	t.Helper()
	if err := <-s.done; err != nil {
		t.Fatalf("run the driver: %v", err)
	}
	out := s.out.String()
	if code := s.exit.Load(); code != 0 {
		t.Errorf("mindroom-agent engine claude exited %d, want 0; output:\n%s", code, out)
	}
	res, ok := engines.ParseResult([]byte(out))
	if !ok {
		t.Fatalf("no result line in the output:\n%s", out)
	}
	return res, string(engines.Output([]byte(out)))
}

// resultLine waits until the driver wrote its result line, even while the Bash command still
// drains (a parked run's permission request keeps its window until people decide).
func (s *started) resultLine(t *testing.T) engines.Result {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		out := s.out.String()
		if res, ok := engines.ParseResult([]byte(out)); ok {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("no result line within %v; output:\n%s", waitBound, out)
		}
		time.Sleep(pollEvery)
	}
}

// runEngine runs the driver and waits for it.
func (r *rig) runEngine(t *testing.T, run *engineRun) (engines.Result, string) {
	t.Helper()
	return r.start(t, run).wait(t)
}

// quote quotes s as one word of Bash.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// admin decides prompts in these tests.
var admin = store.Operator{Name: "ada", Role: store.RoleAdmin}

// pendingPrompt waits until the permission request for the tool use is pending and returns
// it.
func (r *rig) pendingPrompt(t *testing.T, toolUseID string) store.Prompt {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		list, err := r.env.Primary.Internals().Interaction.Prompts.ListPrompts(context.Background(), store.PromptFilter{Limit: 1000})
		if err != nil {
			t.Fatalf("list prompts: %v", err)
		}
		for _, p := range list {
			if p.ToolUseID == toolUseID && p.Status == store.PromptPending {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending permission request for %s within %v", toolUseID, waitBound)
		}
		time.Sleep(pollEvery)
	}
}

// prompts lists every prompt of the primary.
func (r *rig) prompts(t *testing.T) []store.Prompt {
	t.Helper()
	list, err := r.env.Primary.Internals().Interaction.Prompts.ListPrompts(context.Background(), store.PromptFilter{Limit: 1000})
	if err != nil {
		t.Fatalf("list prompts: %v", err)
	}
	return list
}

// decide decides a prompt as the admin.
func (r *rig) decide(t *testing.T, p store.Prompt, action, text string) {
	t.Helper()
	if _, err := r.env.Primary.Internals().Interaction.Prompts.DecidePrompt(context.Background(), p.ID, admin, interaction.PromptDecision{Action: action, Text: text}); err != nil {
		t.Fatalf("decide %s on prompt %d: %v", action, p.ID, err)
	}
}

// modelText is the text a tool result gave the model, without the reminders the CLI appends
// to it for the model.
func modelText(tr messages.ToolResult) string {
	text, _, _ := strings.Cut(tr.Text, "\n\n<system-reminder>")
	return text
}

// toolResult is the result the model got for the tool use of the script's step i.
func toolResult(t *testing.T, model *messages.Server, i int) messages.ToolResult {
	t.Helper()
	tr, ok := model.ToolResult(messages.ToolUseID(i))
	if !ok {
		t.Fatalf("the model got no result for tool use %s", messages.ToolUseID(i))
	}
	return tr
}

// fileText is the content of a file, "" when it does not exist.
func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
