package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/turncli/turncli/internal/testenv"
)

// scrape is one /metrics answer: every sample by its series, written name{k="v",…} with the
// labels sorted (a histogram's count as name_count{…}).
type scrape map[string]float64

func scrapeMetrics(t *testing.T, env *testenv.Env) (scrape, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, err := http.Get(env.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	s := scrape{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() { // the exposition sorts labels by name
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				s[name+key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				s[name+key] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				s[name+"_count"+key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return s, families
}

// waitFor scrapes until cond holds, or fails after 20 s.
func waitFor(t *testing.T, env *testenv.Env, what string, cond func(scrape) bool) scrape {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, _ := scrapeMetrics(t, env)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s", what)
		}
	}
}

// pendingID returns the id of the only pending record a list of the operator API holds.
func pendingID(t *testing.T, env *testenv.Env, path, field string) string {
	t.Helper()
	code, list := operatorREST(t, env, http.MethodGet, path, "")
	items, _ := list[field].([]any)
	if code != http.StatusOK || len(items) != 1 {
		t.Fatalf("GET %s: %d %v", path, code, list)
	}
	return fmt.Sprint(items[0].(map[string]any)["id"])
}

// TestMetricsFollowCallsPromptsAndJobs scrapes /metrics before and after real Agent CLI calls
// from real Bash, a prompt an operator answers, and a background job an operator approves,
// and checks each named series moved by what was done.
func TestMetricsFollowCallsPromptsAndJobs(t *testing.T) {
	env := testenv.Start(t)
	before, _ := scrapeMetrics(t, env)
	id := env.Open(t)

	run := env.RunBash(t, id, "calls", `mindroom-agent tools call test.echo '{}' >/dev/null
mindroom-agent tools call test.echo '{"n":1}' >/dev/null
mindroom-agent tools call test.fail '{}' >/dev/null
mindroom-agent tools list >/dev/null; echo done`)
	if !strings.Contains(run.Stdout, "done") {
		t.Fatalf("bash: %q %q", run.Stdout, run.Stderr)
	}
	calls, _ := scrapeMetrics(t, env)
	moved := func(t *testing.T, from, to scrape, series string, want float64) {
		t.Helper()
		if got := to[series] - from[series]; got != want {
			t.Errorf("%s moved by %v, want %v", series, got, want)
		}
	}
	t.Run("CallsAreCountedByKindOutcomeAndStatus", func(t *testing.T) {
		moved(t, before, calls, `turncli_agent_cli_operations_total{kind="tools.call",outcome="ok"}`, 3)
		moved(t, before, calls, `turncli_agent_cli_operations_total{kind="tools.list",outcome="ok"}`, 1)
		moved(t, before, calls, `turncli_agent_cli_call_duration_seconds_count{status="completed"}`, 2)
		moved(t, before, calls, `turncli_agent_cli_call_duration_seconds_count{status="failed"}`, 1)
		moved(t, before, calls, `turncli_http_requests_total{code="200",method="POST",route="/api/agent-cli/operations",server="agent_cli"}`, 4)
	})
	t.Run("RuntimeRPCsAreCountedByMethodAndCode", func(t *testing.T) {
		moved(t, before, calls, `turncli_grpc_server_requests_total{code="OK",method="OpenResponse",service="turncli.response.v1.ResponseService"}`, 1)
		moved(t, before, calls, `turncli_grpc_server_requests_total{code="OK",method="RunBash",service="turncli.response.v1.ResponseService"}`, 1)
		moved(t, before, calls, `turncli_grpc_server_request_duration_seconds_count{method="RunBash",service="turncli.response.v1.ResponseService"}`, 1)
	})
	t.Run("OpenResponseAndItsReceiptsAreGauged", func(t *testing.T) {
		if calls["turncli_responses_open{}"] != 1 || calls["turncli_receipts_held{}"] != 3 || calls["turncli_windows_open{}"] != 0 {
			t.Errorf("responses %v, receipts %v, windows %v", calls["turncli_responses_open{}"], calls["turncli_receipts_held{}"], calls["turncli_windows_open{}"])
		}
	})

	// A prompt: the command waits on it with a parked long poll until an operator answers.
	callID := uuid.NewString()
	done := make(chan testenv.BashRun, 1)
	go func() {
		done <- env.RunBash(t, id, "prompt", fmt.Sprintf(`mindroom-agent tools call --timeout 0 --call-id %s interaction.request_approval '{"details":"ship it"}' >/dev/null
mindroom-agent calls wait --timeout 60 %s >/dev/null; echo "wait=$?"`, callID, callID))
	}()
	waiting := waitFor(t, env, "a pending prompt and a parked wait", func(s scrape) bool {
		return s[`turncli_interaction_pending{control="prompt"}`] == 1 && s["turncli_agent_cli_parked_waits{}"] == 1
	})
	if waiting["turncli_windows_open{}"] != 1 || waiting[`turncli_interaction_pending_oldest_age_seconds{control="prompt"}`] < 0 {
		t.Errorf("windows %v, oldest prompt %v", waiting["turncli_windows_open{}"], waiting[`turncli_interaction_pending_oldest_age_seconds{control="prompt"}`])
	}
	promptID := pendingID(t, env, "/v1/operator/prompts?status=PROMPT_STATUS_PENDING", "prompts")
	if code, out := operatorREST(t, env, http.MethodPost, "/v1/operator/prompts/"+promptID+":decide", `{"decision":"DECISION_APPROVE"}`); code != http.StatusOK {
		t.Fatalf("decide prompt: %d %v", code, out)
	}
	if r := <-done; !strings.Contains(r.Stdout, "wait=0") {
		t.Fatalf("prompt bash: %q %q", r.Stdout, r.Stderr)
	}
	answered, _ := scrapeMetrics(t, env)
	t.Run("AnsweredPromptIsNoLongerPending", func(t *testing.T) {
		moved(t, waiting, answered, `turncli_interaction_pending{control="prompt"}`, -1)
		moved(t, waiting, answered, "turncli_agent_cli_parked_waits{}", -1)
		// calls wait reads the receipt at once, then long-polls: two reads.
		moved(t, calls, answered, `turncli_agent_cli_operations_total{kind="calls.get",outcome="ok"}`, 2)
		moved(t, waiting, answered, `turncli_http_requests_total{code="200",method="POST",route="/v1/operator/prompts/{prompt_id=*}:decide",server="api"}`, 1)
		if answered[`turncli_store_transaction_duration_seconds_count{outcome="ok"}`] <= before[`turncli_store_transaction_duration_seconds_count{outcome="ok"}`] {
			t.Error("the prompt's store transactions were not timed")
		}
	})

	// A background job: auto mode saves it for approval; an operator approves; it runs and ends.
	if code, out := operatorREST(t, env, http.MethodPost, "/v1/operator/conversations:setMode",
		`{"conversation":{"channel":"!room:example.org","thread":"$thread"},"mode":"MODE_AUTO"}`); code != http.StatusOK {
		t.Fatalf("setMode: %d %v", code, out)
	}
	env.RunBash(t, id, "job", `mindroom-agent tools call interaction.run_in_background '{"command":"true"}'`)
	saved := waitFor(t, env, "a pending approval", func(s scrape) bool { return s[`turncli_interaction_pending{control="approval"}`] == 1 })
	approvalID := pendingID(t, env, "/v1/operator/approvals?status=APPROVAL_STATUS_PENDING", "approvals")
	if code, out := operatorREST(t, env, http.MethodPost, "/v1/operator/approvals/"+approvalID+":decide", `{"decision":"DECISION_APPROVE"}`); code != http.StatusOK {
		t.Fatalf("approve: %d %v", code, out)
	}
	finished := waitFor(t, env, "the job finished", func(s scrape) bool {
		return s["turncli_jobs_finished_total{}"] == saved["turncli_jobs_finished_total{}"]+1
	})
	t.Run("ApprovedJobRanAndLeftAContinuation", func(t *testing.T) {
		moved(t, saved, finished, `turncli_interaction_pending{control="approval"}`, -1)
		if finished["turncli_jobs_running{}"] != 0 || finished["turncli_continuations_unacknowledged{}"] < 1 ||
			finished["turncli_continuations_unacknowledged_oldest_age_seconds{}"] < 0 {
			t.Errorf("running %v, unacknowledged %v (oldest %v s)", finished["turncli_jobs_running{}"],
				finished["turncli_continuations_unacknowledged{}"], finished["turncli_continuations_unacknowledged_oldest_age_seconds{}"])
		}
	})

	// Requests naming ids, good and bad, with and without a credential, must not mint series.
	operatorREST(t, env, http.MethodGet, "/v1/operator/prompts/987654321", "")
	operatorREST(t, env, http.MethodGet, "/v1/operator/jobs/"+uuid.NewString(), "")
	if resp, err := http.Get(env.HTTPURL + "/v1/responses/" + id + "/no/such/route"); err == nil {
		resp.Body.Close()
	}
	t.Run("RequestSeriesCarryNoIds", func(t *testing.T) {
		_, families := scrapeMetrics(t, env)
		// Record ids are small numbers: a numeric path segment catches them (digitSegment).
		assertBoundedLabels(t, families, []string{id, callID, "987654321"})
	})
}

var (
	uuidLike     = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-`)
	digitSegment = regexp.MustCompile(`/[0-9]+(/|:|$)`)
)

// assertBoundedLabels checks every label value of the request series: routes are patterns or
// "unmatched", and no value holds an id (one of ids, a UUID, or a numeric path segment).
func assertBoundedLabels(t *testing.T, families map[string]*dto.MetricFamily, ids []string) {
	t.Helper()
	seen := 0
	for name, f := range families {
		if !strings.HasPrefix(name, "turncli_http_") && !strings.HasPrefix(name, "turncli_grpc_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				seen++
				v := l.GetValue()
				for _, id := range ids {
					if strings.Contains(v, id) {
						t.Errorf("%s{%s=%q} holds the id %q", name, l.GetName(), v, id)
					}
				}
				if uuidLike.MatchString(v) || digitSegment.MatchString(v) {
					t.Errorf("%s{%s=%q} holds an id", name, l.GetName(), v)
				}
				if l.GetName() == "route" && v != "unmatched" && !strings.HasPrefix(v, "/") {
					t.Errorf("%s has route %q, neither a pattern nor unmatched", name, v)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no request series were scraped")
	}
}

// TestReadinessFlipsDuringShutdown: while the primary shuts down, /readyz answers 503 naming
// the shutdown (while /healthz stays 200), and the gRPC health service says NOT_SERVING.
func TestReadinessFlipsDuringShutdown(t *testing.T) {
	env := testenv.Start(t)
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// Serve runs in its own goroutine: the primary turns ready once its listeners serve.
	for _, url := range []string{env.MetricsURL + "/readyz", env.HTTPURL + "/readyz"} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			code, body := get(url)
			if code == http.StatusOK && strings.Contains(body, `"status":"ready"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s before shutdown: %d %s", url, code, body)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch, err := healthpb.NewHealthClient(env.Conn).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := watch.Recv(); err != nil || s.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("gRPC health before shutdown: %v %v", s, err)
	}
	// The open health watch is a stream GracefulStop waits for: it holds the shutdown open (up
	// to its grace) while the test looks.
	env.Shutdown()
	if s, err := watch.Recv(); err != nil || s.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("gRPC health during shutdown: %v %v", s, err)
	}
	code, body := get(env.MetricsURL + "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"check":"shutdown"`) {
		t.Errorf("/readyz during shutdown: %d %s", code, body)
	}
	if code, body := get(env.MetricsURL + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz during shutdown: %d %s", code, body)
	}
	cancel() // ends the watch, and so the shutdown
}
