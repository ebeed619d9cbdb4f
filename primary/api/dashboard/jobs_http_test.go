package dashboard_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// finishedJob records a job and finishes it with outcome, as the jobs engine does.
func finishedJob(t *testing.T, env *testenv.Env, outcome string) int64 {
	t.Helper()
	ctx := context.Background()
	j, err := env.Primary.Internals().Store.CreateJob(ctx, store.NewJob{Kind: "command", Command: "make release", Label: "release",
		Channel: "!room", Thread: "$t", Author: "@alice", Agent: "tester", Workspace: t.TempDir(), Ceiling: time.Minute, LogDir: t.TempDir()}, store.JobCaps{})
	if err != nil {
		t.Fatal(err)
	}
	key := "job:" + strconv.FormatInt(j.ID, 10)
	if _, _, err := env.Primary.Internals().Store.FinishJob(ctx, j.ID, store.JobResult{Outcome: outcome},
		store.NewContinuation{IdempotencyKey: key, Channel: "!room", Thread: "$t", Text: "done"}); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

var jobBadge = regexp.MustCompile(`<span class="status s-([a-z-]+)" id="job-badge">([^<]*)</span>`)

func TestAJobsBadgeSaysHowItEnded(t *testing.T) {
	env := testenv.Start(t)
	b := signIn(t, env, adminToken(t, env))
	for _, tc := range []struct {
		name, outcome, class, word string
		ran                        bool
	}{
		{"SuccessIsGreen", "success", "succeeded", "succeeded", true},
		{"AnExitStatusIsAFailure", "failed with a general error (exit 1)", "failed", "failed", true},
		{"TheTimeLimitIsAFailure", "stopped at the time limit", "failed", "failed", true},
		{"ASignalIsAFailure", "stopped by signal 9 (killed)", "failed", "failed", true},
		{"ACancelIsACancel", "cancelled on request", "cancelled", "cancelled", true},
		{"ARestartLeavesItUnknown", "outcome unknown after restart", "unknown", "outcome unknown", true},
		{"AnInterruptedAgentIsUnknown", "interrupted by a restart of the primary; not replayed", "unknown", "outcome unknown", true},
		{"AStartErrorCouldNotStart", "could not start: the workspace /gone does not exist", "not-started", "could not start", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := finishedJob(t, env, tc.outcome)
			resp, page := b.get("/ui/jobs/" + strconv.FormatInt(id, 10))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, page)
			}
			m := jobBadge.FindStringSubmatch(page)
			if m == nil || m[1] != tc.class || m[2] != tc.word {
				t.Errorf("badge %q, want class s-%s saying %q", m, tc.class, tc.word)
			}
			if !strings.Contains(page, `<span id="job-outcome">`+tc.outcome+`</span>`) {
				t.Errorf("the page does not show the outcome %q", tc.outcome)
			}
			hasLog := strings.Contains(page, `id="job-log"`)
			hasFollow := strings.Contains(page, `id="follow"`)
			noLog := strings.Contains(page, `<p class="empty" id="no-log">It never ran, so it has no log.</p>`)
			if hasLog != tc.ran || hasFollow != tc.ran || noLog == tc.ran {
				t.Errorf("log %v, follow %v, never-ran note %v; want a log and a Follow box only for a job that ran (%v)", hasLog, hasFollow, noLog, tc.ran)
			}
			_, list := b.get("/ui/jobs")
			row := regexp.MustCompile(`(?s)<tr id="job-` + strconv.FormatInt(id, 10) + `">.*?</tr>`).FindString(list)
			if want := `<span class="status s-` + tc.class + `">` + tc.word + `</span>`; !strings.Contains(row, want) {
				t.Errorf("the jobs list's row lacks %q:\n%s", want, row)
			}
		})
	}
}
