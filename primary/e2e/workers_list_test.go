package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/worker"
)

// TestOperatorsSeeTheConnectedWorkers: ListWorkers shows each connected worker with its key,
// capacity, the commands it runs and the jobs running on it, in (key, id) order, a page at a
// time and filtered by key, to members too.
func TestOperatorsSeeTheConnectedWorkers(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	env.StartWorker(t, "key-a", "wk-a1", func(c *worker.Config) { c.Capacity = 2 })
	env.StartWorker(t, "key-a", "wk-a2", func(c *worker.Config) { c.Capacity = 1 })
	env.StartWorker(t, "key-b", "wk-b")

	type listed struct {
		key, id        string
		capacity, runs int
		jobs           []any
	}
	list := func(t *testing.T, query string) ([]listed, string, int) {
		t.Helper()
		code, body := operatorREST(t, env, http.MethodGet, "/v1/operator/workers"+query, "")
		if code != http.StatusOK {
			return nil, "", code
		}
		var out []listed
		for _, w := range body["workers"].([]any) {
			m := w.(map[string]any)
			num := func(k string) int {
				var n int
				fmt.Sscan(fmt.Sprint(m[k]), &n) // absent (zero) or a JSON number
				return n
			}
			jobs, _ := m["running_job_ids"].([]any)
			out = append(out, listed{key: m["worker_key"].(string), id: m["worker_id"].(string), capacity: num("capacity"), runs: num("running_commands"), jobs: jobs})
		}
		next, _ := body["next_page_token"].(string)
		return out, next, code
	}
	ids := func(ws []listed) string {
		var s []string
		for _, w := range ws {
			s = append(s, w.key+"/"+w.id)
		}
		return strings.Join(s, ",")
	}

	t.Run("EveryConnectedWorkerInKeyAndIDOrderWithItsCapacity", func(t *testing.T) {
		ws, next, code := list(t, "")
		if code != http.StatusOK || ids(ws) != "key-a/wk-a1,key-a/wk-a2,key-b/wk-b" || next != "" {
			t.Fatalf("code %d, workers %s, next %q", code, ids(ws), next)
		}
		if ws[0].capacity != 2 || ws[1].capacity != 1 || ws[2].capacity != 0 {
			t.Fatalf("capacities %+v", ws)
		}
	})

	t.Run("PagesOfOneWalkEveryWorkerOnce", func(t *testing.T) {
		var seen []listed
		token := ""
		for range 4 {
			ws, next, code := list(t, "?page_size=1&page_token="+url.QueryEscape(token))
			if code != http.StatusOK {
				t.Fatalf("code %d", code)
			}
			seen = append(seen, ws...)
			if token = next; token == "" {
				break
			}
		}
		if ids(seen) != "key-a/wk-a1,key-a/wk-a2,key-b/wk-b" {
			t.Fatalf("pages walked %s", ids(seen))
		}
	})

	t.Run("AKeyFilterShowsOnlyItsWorkersAndBindsItsToken", func(t *testing.T) {
		ws, next, _ := list(t, "?worker_key=key-a&page_size=1")
		if ids(ws) != "key-a/wk-a1" || next == "" {
			t.Fatalf("workers %s, next %q", ids(ws), next)
		}
		if _, _, code := list(t, "?page_size=1&page_token="+url.QueryEscape(next)); code != http.StatusBadRequest {
			t.Fatalf("a key-a token without the filter: code %d, want 400", code)
		}
		if ws, _, _ := list(t, "?worker_key=key-b"); ids(ws) != "key-b/wk-b" {
			t.Fatalf("key-b: %s", ids(ws))
		}
	})

	t.Run("RunningCommandsAndJobsShowOnTheirWorker", func(t *testing.T) {
		gate := filepath.Join(t.TempDir(), "gate")
		resp := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-b" })
		done := make(chan testenv.BashRun, 1)
		go func() {
			done <- env.RunBash(t, resp, "list-workers-gate", fmt.Sprintf("while [ ! -e %q ]; do sleep 0.02; done", gate))
		}()
		id, err := env.Primary.Internals().Jobs.Start(ctx, jobs.JobSpec{Kind: "command", Command: "sleep 60", Channel: "!room", Thread: "$t",
			Agent: "tester", WorkerKey: "key-b"})
		if err != nil {
			t.Fatal(err)
		}
		defer env.Primary.Internals().Jobs.Cancel(ctx, id)
		waitUntil(t, "the command and the job on wk-b", func() bool {
			ws, _, _ := list(t, "?worker_key=key-b")
			return len(ws) == 1 && ws[0].runs == 1 && len(ws[0].jobs) == 1 && fmt.Sprint(ws[0].jobs[0]) == fmt.Sprint(id)
		})
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if run := <-done; run.Result.GetExitCode() != 0 {
			t.Fatalf("gated command: %+v", run.Result)
		}
		waitUntil(t, "wk-b to run no command", func() bool {
			ws, _, _ := list(t, "?worker_key=key-b")
			return len(ws) == 1 && ws[0].runs == 0
		})
	})

	t.Run("AMemberMayListAndNobodyElse", func(t *testing.T) {
		token, err := operators.Add(ctx, env.Primary.Internals().Store, "mia", store.RoleMember)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, token string
			want        int
		}{{"member", token, http.StatusOK}, {"no credential", "", http.StatusUnauthorized}, {"runtime", env.Primary.RuntimeToken(), http.StatusUnauthorized}} {
			req, _ := http.NewRequest(http.MethodGet, env.HTTPURL+"/v1/operator/workers", nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("%s: code %d, want %d", tc.name, res.StatusCode, tc.want)
			}
		}
	})
}

// waitUntil polls cond every 20 ms for at most 20 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
