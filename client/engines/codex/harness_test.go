package codex_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turncli/turncli/client/engines"
	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/enginetest"
	"github.com/turncli/turncli/internal/scriptedmodel/responses"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// These tests run the real codex CLI through the real mindroom-agent (`mindroom-agent engine
// codex` in a Bash command of a real primary's response), against a scripted Responses API on
// loopback.

// waitBound bounds every wait for something the engine or the primary does on its own time.
// Reaching it fails the test; it is never a measurement.
const waitBound = 60 * time.Second

// pollEvery is the pause between two looks at the store while waiting.
const pollEvery = 20 * time.Millisecond

// channel is the conversation of every test response; each run has a thread of its own.
const channel = "!room:example.org"

var threadSeq atomic.Int64

// model is the model the runs ask for: one Codex offers its tools as plain functions, as the
// scripts call them.
const model = "gpt-5.1-codex"

// engineRun is one run of the driver to be started.
type engineRun struct {
	env   *testenv.Env
	model *responses.Server
	// thread is the conversation thread of its response.
	thread     string
	responseID string
	// work is the job's working directory, home its HOME.
	work, home string
	brief      string
	// pidFile, when set, receives the driver's process id.
	pidFile string
	// codexDir is the directory of the codex CLI.
	codexDir string
	// proxy is the run's HTTP and HTTPS proxy: every request the CLI makes to anything but
	// loopback reaches it and is refused at once, so none can hang a test.
	proxy *enginetest.Egress
	// refusalsExpected: the script runs out on purpose.
	refusalsExpected bool
}

// newRun prepares a run of the script in a fresh response, working directory and HOME.
func newRun(t *testing.T, env *testenv.Env, brief string, steps ...responses.Step) *engineRun {
	t.Helper()
	codexDir := filepath.Dir(enginetest.Codex(t))
	thread := fmt.Sprintf("$codex-%d", threadSeq.Add(1))
	id := env.Open(t, func(r *responsev1.OpenResponseRequest) {
		r.Conversation = &conversationv1.Conversation{Channel: channel, Thread: thread}
	})
	return &engineRun{
		env: env, model: responses.Start(t, steps...), thread: thread, responseID: id,
		work: t.TempDir(), home: t.TempDir(), brief: brief, codexDir: codexDir,
		proxy: enginetest.StartEgress(t),
	}
}

// finished is a run that ended.
type finished struct {
	testenv.BashRun
	result engines.Result
}

// run runs the driver and waits for its end; the result line must be there.
func (r *engineRun) run(t *testing.T) finished {
	t.Helper()
	engineHome := t.TempDir()
	cmd := fmt.Sprintf("cd %s && export PATH=%s:$PATH HOME=%s OPENAI_BASE_URL=%s OPENAI_API_KEY=test-key OPENAI_MODEL=%s HTTPS_PROXY=%[6]s HTTP_PROXY=%[6]s ALL_PROXY=%[6]s NO_PROXY=127.0.0.1,localhost %[7]s=%[8]s %[9]s=%[10]s && ",
		quote(r.work), quote(r.codexDir), quote(r.home), quote(r.model.BaseURL()), model, quote(r.proxy.URL),
		engines.HomeEnv, quote(engineHome), engines.TaskEnv, quote(r.brief))
	if r.pidFile != "" {
		cmd += fmt.Sprintf("{ mindroom-agent engine codex & echo $! > %s; wait $!; }", quote(r.pidFile))
	} else {
		cmd += "exec mindroom-agent engine codex"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitBound)
	defer cancel()
	run := r.env.RunBashContext(ctx, t, r.responseID, fmt.Sprintf("engine-%d", threadSeq.Add(1)), cmd, 2*waitBound)
	res, ok := engines.ParseResult([]byte(run.Stdout))
	if !ok {
		t.Fatalf("no result line; exit %d\nstdout:\n%s\nstderr:\n%s\nunexpected requests: %q",
			run.Result.GetExitCode(), run.Stdout, run.Stderr, r.model.Unexpected())
	}
	if u := r.model.Unexpected(); len(u) > 0 && !r.refusalsExpected {
		t.Errorf("the scripted model got requests it could not answer: %q", u)
	}
	if left := r.proxy.Tried(); len(left) > 0 {
		t.Errorf("the CLI sent requests beyond loopback: %q", left)
	}
	return finished{BashRun: run, result: res}
}

// start runs the driver in the background; wait returns what run would.
func (r *engineRun) start(t *testing.T) (wait func() finished) {
	t.Helper()
	done := make(chan finished, 1)
	failed := make(chan struct{})
	go func() {
		defer close(failed)
		done <- r.run(t)
	}()
	return func() finished {
		t.Helper()
		<-failed
		select {
		case f := <-done:
			return f
		default:
			t.FailNow()
			return finished{}
		}
	}
}

// waitPrompt waits until the run's thread has a pending permission prompt and returns it.
func (r *engineRun) waitPrompt(t *testing.T) store.Prompt {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		list, err := r.env.Primary.Internals().Interaction.Prompts.ListPrompts(context.Background(),
			store.PromptFilter{Channel: channel, Thread: r.thread, Limit: 100})
		if err != nil {
			t.Fatalf("list prompts: %v", err)
		}
		for _, p := range list {
			if p.Status == store.PromptPending {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no permission prompt in %s within %v", r.thread, waitBound)
		}
		time.Sleep(pollEvery)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeFile writes a file, creating its directory.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
