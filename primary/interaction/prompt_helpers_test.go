package interaction_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// The operators who decide prompts in these tests (as the operator API would pass them).
var (
	adminOp  = store.Operator{Name: adminAuthor, Role: store.RoleAdmin}
	memberOp = store.Operator{Name: memberAuthor, Role: store.RoleMember}
)

// submitted is a `mindroom-agent tools call --timeout 0` running in its own Bash command. The
// command's window drains until the call settles, so its Bash result arrives only then.
type submitted struct {
	callID string
	done   chan callResult
}

// submit starts `mindroom-agent tools call --timeout 0 --call-id <new id> <function>` with
// the arguments read from a file (so that no argument appears in the command line), in a new
// Bash command of the response, and returns at once.
func submit(t *testing.T, env *testenv.Env, responseID, function string, args any) submitted {
	t.Helper()
	callID := uuid.NewString()
	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte(jsonArgs(t, args)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := submitted{callID: callID, done: make(chan callResult, 1)}
	cmd := fmt.Sprintf("mindroom-agent tools call --timeout 0 --call-id %s --json-file %s %s", callID, bashQuote(file), function)
	bashID := fmt.Sprintf("bash-%d", bashSeq.Add(1))
	go func() { s.done <- runBash(env, responseID, bashID, cmd) }()
	return s
}

// result waits for the submitting command to end and returns what it printed.
func (s submitted) result(t *testing.T) callResult {
	t.Helper()
	select {
	case r := <-s.done:
		return r
	case <-time.After(waitBound):
		t.Fatalf("the command that submitted call %s did not end within %v", s.callID, waitBound)
		return callResult{}
	}
}

// runBash runs a Bash command of the response through the runtime API and reports failures
// of the API in the result rather than to a test, so any goroutine may call it.
func runBash(env *testenv.Env, responseID, bashID, command string) callResult {
	stream, err := env.Runtime.RunBash(context.Background(), &responsev1.RunBashRequest{ResponseId: responseID, BashCallId: bashID, Command: command})
	if err != nil {
		return callResult{code: -1, stderr: "RunBash: " + err.Error()}
	}
	var out, errOut bytes.Buffer
	r := callResult{code: -1}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errOut.WriteString("RunBash stream: " + err.Error())
			break
		}
		switch ev := msg.GetEvent().(type) {
		case *responsev1.RunBashResponse_Output:
			if ev.Output.GetStream() == responsev1.OutputStream_OUTPUT_STREAM_STDERR {
				errOut.Write(ev.Output.GetData())
			} else {
				out.Write(ev.Output.GetData())
			}
		case *responsev1.RunBashResponse_Result:
			r.code = int(ev.Result.GetExitCode())
		}
	}
	r.stdout, r.stderr = out.String(), errOut.String()
	var obj map[string]any
	d := json.NewDecoder(strings.NewReader(r.stdout))
	d.UseNumber()
	if err := d.Decode(&obj); err == nil {
		r.status, _ = obj["status"].(string)
		r.outcome = obj["outcome"]
		r.errMsg, _ = obj["error"].(string)
	}
	return r
}

// agentCLI runs `mindroom-agent <args>` in a new Bash command of the response.
func agentCLI(t *testing.T, env *testenv.Env, responseID, args string) callResult {
	t.Helper()
	return runBash(env, responseID, fmt.Sprintf("bash-%d", bashSeq.Add(1)), "mindroom-agent "+args)
}

// callWithArgsFile runs `mindroom-agent tools call <function> --json-file <args>` and waits
// for its end (the client's default timeout).
func callWithArgsFile(t *testing.T, env *testenv.Env, responseID, function string, args any) callResult {
	t.Helper()
	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte(jsonArgs(t, args)), 0o600); err != nil {
		t.Fatal(err)
	}
	return agentCLI(t, env, responseID, "tools call "+function+" --json-file "+bashQuote(file))
}

// waitPrompt waits until the call has posted its prompt and returns it.
func waitPrompt(t *testing.T, env *testenv.Env, callID string) store.Prompt {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		list, err := env.Primary.Internals().Interaction.Prompts.ListPrompts(context.Background(), store.PromptFilter{Limit: 1000})
		if err != nil {
			t.Fatalf("list prompts: %v", err)
		}
		for _, p := range list {
			if p.CallID == callID {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s posted no prompt within %v", callID, waitBound)
		}
		time.Sleep(pollEvery)
	}
}

// waitPromptStatus waits until the prompt has the status and returns it.
func waitPromptStatus(t *testing.T, env *testenv.Env, id int64, status store.PromptStatus) store.Prompt {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		p, err := env.Primary.Internals().Interaction.Prompts.Prompt(context.Background(), id)
		if err != nil {
			t.Fatalf("prompt %d: %v", id, err)
		}
		if p.Status == status {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("prompt %d is %s, not %s, after %v", id, p.Status, status, waitBound)
		}
		time.Sleep(pollEvery)
	}
}

// promptsIn lists the prompts (any status) of a thread of the test channel.
func promptsIn(t *testing.T, env *testenv.Env, thread string) []store.Prompt {
	t.Helper()
	list, err := env.Primary.Internals().Interaction.Prompts.ListPrompts(context.Background(), store.PromptFilter{Channel: channel, Thread: thread, Limit: 1000})
	if err != nil {
		t.Fatalf("list prompts: %v", err)
	}
	return list
}

// waitStatus polls `mindroom-agent calls get` until the call's receipt has the status.
func waitStatus(t *testing.T, env *testenv.Env, responseID, callID, status string) callResult {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		r := agentCLI(t, env, responseID, "calls get "+callID)
		if r.status == status {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s is not %s within %v: %s", callID, status, waitBound, r)
		}
		time.Sleep(pollEvery)
	}
}

// decide decides a prompt and fails the test on an error.
func decide(t *testing.T, env *testenv.Env, id int64, by store.Operator, action, text string) store.Prompt {
	t.Helper()
	p, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(context.Background(), id, by, interaction.PromptDecision{Action: action, Text: text})
	if err != nil {
		t.Fatalf("%s decides %s on prompt %d: %v", by.Name, action, id, err)
	}
	return p
}

// settledText waits for the call with `mindroom-agent calls wait`, checks it completed (exit
// 0) with a JSON text outcome, and returns that text decoded.
func settledText(t *testing.T, env *testenv.Env, responseID, callID string) map[string]any {
	t.Helper()
	r := agentCLI(t, env, responseID, fmt.Sprintf("calls wait %s --timeout %d", callID, int(waitBound/time.Second)))
	return jsonText(t, r)
}

// jsonText checks a completed call whose outcome is a JSON text and returns it decoded.
func jsonText(t *testing.T, r callResult) map[string]any {
	t.Helper()
	text, ok := r.outcome.(string)
	if r.code != 0 || r.status != "completed" || !ok {
		t.Fatalf("want a completed call (exit 0) with a text outcome; got %s", r)
	}
	var v map[string]any
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("outcome %q is not a JSON object: %v", text, err)
	}
	return v
}

// feed collects the live feed's prompt events from when it is made.
type feed struct {
	mu   sync.Mutex
	evs  []events.Event
	stop func()
	done chan struct{}
}

func watchPrompts(t *testing.T, env *testenv.Env) *feed {
	t.Helper()
	ch, stop := env.Primary.Internals().Events.Subscribe(1024)
	f := &feed{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for ev := range ch {
			if strings.HasPrefix(ev.Kind, "prompt.") {
				f.mu.Lock()
				f.evs = append(f.evs, ev)
				f.mu.Unlock()
			}
		}
	}()
	t.Cleanup(f.close)
	return f
}

func (f *feed) close() {
	f.stop()
	<-f.done
}

// kinds returns the kinds of the events about a prompt, in order, waiting until the last one
// is want (or failing at the bound).
func (f *feed) kindsUntil(t *testing.T, id int64, want string) []string {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		var kinds []string
		f.mu.Lock()
		for _, ev := range f.evs {
			if ev.Subject == store.PromptSubject(id) {
				kinds = append(kinds, ev.Kind)
			}
		}
		f.mu.Unlock()
		if len(kinds) > 0 && kinds[len(kinds)-1] == want {
			return kinds
		}
		if time.Now().After(deadline) {
			t.Fatalf("prompt %d: events %v, no %s within %v", id, kinds, want, waitBound)
		}
		time.Sleep(pollEvery)
	}
}

// all returns every prompt event so far, encoded as JSON.
func (f *feed) all(t *testing.T) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := json.Marshal(f.evs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// logBuffer collects a primary's log output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
