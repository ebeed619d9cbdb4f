package interaction_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/worker"
)

// lockedBuffer collects log lines written from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// eventLog collects every event published on a bus, as JSON.
type eventLog struct {
	mu  sync.Mutex
	all []string
}

func watchEvents(t *testing.T, bus *events.Bus) *eventLog {
	ch, stop := bus.Subscribe(4096)
	l := &eventLog{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range ch {
			b, _ := json.Marshal(ev)
			l.mu.Lock()
			l.all = append(l.all, string(b))
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() { stop(); <-done })
	return l
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// TestLiveSecretsAreRedactedWherePeopleAndLogsSeeThem runs a local job and a worker job (real
// Bash, a real worker) that print another operator's credential, the runtime credential, a
// worker credential and another response's live grant, and asks permission with that grant
// under an ordinary key. What operators read (job, tail, log), the continuations, the events
// and every log line of the primary at DEBUG show "(redacted)" for each and none of them.
func TestLiveSecretsAreRedactedWherePeopleAndLogsSeeThem(t *testing.T) {
	logs := &lockedBuffer{}
	env := start(t, withTestEngine(), testenv.WithConfig(func(c *primary.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.Interaction.PromptWait = time.Second
	}))
	feed := watchEvents(t, env.Primary.Internals().Events)
	addAuthors(t, env)
	env.StartWorker(t, "key-a", "w1", func(c *worker.Config) { c.Shells.EnvAllow = []string{"LANG"} })
	stopJobsAtCleanup(t, env) // before the worker stops

	other := openAdmin(t, env, "$other")
	run := env.RunBash(t, other, "grant", `printf %s "$MINDROOM_AGENT_CLI_TOKEN"`)
	secrets := map[string]string{
		"another operator's credential": addOperator(t, env, "bob", store.RoleMember),
		"the runtime credential":        env.Primary.RuntimeToken(),
		"a worker credential":           testenv.WorkerCredential("key-b"),
		"another response's live grant": run.Stdout,
	}
	if len(run.Stdout) != 43 {
		t.Fatalf("the other response's grant is %q", run.Stdout)
	}
	file := filepath.Join(t.TempDir(), "found.txt")
	var text strings.Builder
	for what, v := range secrets {
		text.WriteString(strings.ReplaceAll(what, " ", "_") + "=" + v + "\n")
	}
	if err := os.WriteFile(file, []byte(text.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := operatorClient(t, env, firstAdminToken(t, env))
	ctx := context.Background()

	check := func(t *testing.T, where, got string) {
		t.Helper()
		for what, v := range secrets {
			if strings.Contains(got, v) {
				t.Errorf("%s shows %s:\n%s", where, what, got)
			}
			if !strings.Contains(got, strings.ReplaceAll(what, " ", "_")+"=(redacted)") {
				t.Errorf("%s does not show %s as (redacted):\n%s", where, what, got)
			}
		}
	}
	for _, place := range []struct {
		name string
		edit []func(*responsev1.OpenResponseRequest)
	}{
		{"LocalJob", nil},
		{"WorkerJob", []func(*responsev1.OpenResponseRequest){func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" }}},
	} {
		t.Run(place.name, func(t *testing.T) {
			thread := "$secrets-" + place.name
			setMode(t, env, thread, store.ModeAdmin)
			id := openAdmin(t, env, thread, place.edit...)
			jobID := startedJob(t, callTool(t, env, id, "interaction.run_in_background",
				jsonArgs(t, map[string]any{"command": "cat " + file, "label": "found " + run.Stdout})))
			c := waitContinuation(t, env, jobKey(jobID))
			check(t, "the continuation", c.Text)
			got, err := admin.GetJob(ctx, &operatorv1.GetJobRequest{JobId: uint64(jobID)})
			if err != nil {
				t.Fatal(err)
			}
			check(t, "the job's tail", got.GetJob().GetTail())
			if strings.Contains(got.GetJob().GetLabel(), run.Stdout) {
				t.Errorf("the job's label shows the grant: %q", got.GetJob().GetLabel())
			}
			body, err := admin.GetJobLog(ctx, &operatorv1.GetJobLogRequest{JobId: uint64(jobID)})
			if err != nil {
				t.Fatal(err)
			}
			for what, v := range secrets {
				if bytes.Contains(body.GetData(), []byte(v)) || !bytes.Contains(body.GetData(), []byte(strings.ReplaceAll(what, " ", "_")+"=(redacted)")) {
					t.Errorf("the job's log read shows %s, or not as (redacted):\n%s", what, body.GetData())
				}
			}
			if raw, err := os.ReadFile(waitJob(t, env, jobID).LogPath); err != nil || len(body.GetData()) != len(raw) {
				t.Errorf("the log read is %d bytes of a %d-byte log (%v): paging by offsets would break", len(body.GetData()), len(raw), err)
			}
		})
	}

	t.Run("PermissionPromptWithAGrantUnderAnOrdinaryKey", func(t *testing.T) {
		thread := "$secrets-prompt"
		id := openAdmin(t, env, thread)
		callTool(t, env, id, "interaction.permission_prompt", jsonArgs(t, map[string]any{
			"tool_name": "Bash", "input": map[string]any{"command": "curl -H 'X: " + run.Stdout + "' host", "note": run.Stdout}}))
		prompts, err := env.Primary.Internals().Store.ListPrompts(ctx, store.PromptFilter{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range prompts {
			if p.Thread != thread {
				continue
			}
			found = true
			if masked := string(p.MaskedInput); strings.Contains(masked, run.Stdout) || strings.Count(masked, "(redacted)") != 2 {
				t.Errorf("the prompt people see holds the grant, or not twice redacted: %s", masked)
			}
		}
		if !found {
			t.Fatal("no prompt was posted")
		}
	})

	t.Run("EventsShowNoSecret", func(t *testing.T) {
		all := feed.String()
		for what, v := range secrets {
			if strings.Contains(all, v) {
				t.Errorf("the events show %s", what)
			}
		}
		if !strings.Contains(all, "found (redacted)") {
			t.Errorf("the job events do not show the label redacted:\n%s", all)
		}
	})

	t.Run("LogsAtEveryLevelHoldNoSecret", func(t *testing.T) {
		all := logs.String()
		if !strings.Contains(all, "level=DEBUG") {
			t.Fatalf("no debug line was captured:\n%s", all)
		}
		for what, v := range secrets {
			if strings.Contains(all, v) {
				t.Errorf("the primary's log holds %s", what)
			}
		}
	})
}
