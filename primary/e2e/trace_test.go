package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/hostkit"
	"github.com/turncli/turncli/internal/otlpsink"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/worker"
)

// One runtime-driven Bash command on a worker calls a hostkit tool through the worker's sandbox
// proxy, with tracing on in the primary, the worker and the host, all exporting over OTLP to one
// receiver: every span of the call is in the runtime's trace, and its parents lead from the
// tool back to the runtime's span hop by hop.
func TestOneTraceFromTheRuntimeToTheTool(t *testing.T) {
	const (
		traceID    = "4bf92f3577b34da6a3ce929d0e0e4736"
		runtimeSID = "00f067aa0ba902b7"
	)
	sink, tracing := startReceiver(t)
	primaryTel, workerTel, hostTel := tracing("mindroom-primary"), tracing("mindroom-worker"), tracing("tool-host")

	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Telemetry = primaryTel }))
	env.StartWorker(t, "key-a", "worker-a1", func(c *worker.Config) { c.Telemetry = workerTel })
	startHost(t, env, hostTel, hostkit.Toolkit{Name: "traced_tk", Functions: []hostkit.Function{
		hostkit.Func("add", "Adds.", func(_ context.Context, _ hostkit.Call, in struct{ A, B int }) (int, error) { return in.A + in.B, nil }),
	}})

	id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })
	ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-"+runtimeSID+"-01")
	run := env.RunBashContext(ctx, t, id, "b1", `mindroom-agent tools call traced_tk.add '{"A":2,"B":40}'`, 0)
	if run.Result.GetExitCode() != 0 || !strings.Contains(run.Stdout, `"outcome":42`) {
		t.Fatalf("exit %d stdout %q stderr %q", run.Result.GetExitCode(), run.Stdout, run.Stderr)
	}
	// A server span ends as its RPC finishes, which the client may see first: collect until the
	// chain reaches the runtime's span or 10 s pass.
	var spans map[string]otlpsink.Span
	var tool *otlpsink.Span
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for _, tel := range []*telemetry.Telemetry{hostTel, workerTel, primaryTel} {
			if err := tel.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		spans, tool = traceOf(sink.Spans(), traceID, "tool traced_tk.add")
		if reaches(spans, tool, runtimeSID) || time.Now().After(deadline) {
			break
		}
	}
	if tool == nil {
		t.Fatalf("no span of the tool in the runtime's trace; received %v", sink.Spans())
	}
	// The chain, from the tool up: each hop is the parent of the one before.
	want := []string{
		"tool-host: tool traced_tk.add",
		"mindroom-primary: dispatch traced_tk.add",
		"mindroom-primary: turncli.agentcli.v1.AgentCLIService/",
		"mindroom-worker: turncli.agentcli.v1.AgentCLIService/",
		"mindroom-worker: POST /api/agent-cli/operations",
		"mindroom-worker: bash",
		"mindroom-primary: bash",
		"mindroom-primary: turncli.response.v1.ResponseService/RunBash",
	}
	var chain []string
	s := *tool
	for {
		chain = append(chain, s.Service+": "+s.Name)
		parent, ok := spans[s.ParentID]
		if !ok {
			break
		}
		s = parent
	}
	if s.ParentID != runtimeSID {
		t.Errorf("the chain ends at %q, whose parent is %q, not the runtime's span %s", chain[len(chain)-1], s.ParentID, runtimeSID)
	}
	if len(chain) != len(want) {
		t.Fatalf("chain from the tool to the runtime:\n%s\nwant:\n%s", strings.Join(chain, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("chain from the tool to the runtime:\n%s", strings.Join(chain, "\n"))
	for i := range want {
		if !strings.HasPrefix(chain[i], want[i]) {
			t.Fatalf("hop %d is %q, want %q; chain:\n%s", i, chain[i], want[i], strings.Join(chain, "\n"))
		}
	}
}

// traceOf returns the spans of trace traceID by span id, and the one named name.
func traceOf(all []otlpsink.Span, traceID, name string) (map[string]otlpsink.Span, *otlpsink.Span) {
	spans := map[string]otlpsink.Span{}
	var named *otlpsink.Span
	for _, s := range all {
		if s.TraceID != traceID {
			continue
		}
		spans[s.SpanID] = s
		if s.Name == name {
			named = &s
		}
	}
	return spans, named
}

// reaches reports whether the parents of s lead to the span root.
func reaches(spans map[string]otlpsink.Span, s *otlpsink.Span, root string) bool {
	for s != nil {
		if s.ParentID == root {
			return true
		}
		p, ok := spans[s.ParentID]
		if !ok {
			return false
		}
		s = &p
	}
	return false
}

// startHost runs a tool host with toolkits on env's primary until the test ends.
func startHost(t *testing.T, env *testenv.Env, tel *telemetry.Telemetry, toolkits ...hostkit.Toolkit) {
	t.Helper()
	registered := make(chan struct{}, 1)
	h, err := hostkit.New(hostkit.Config{
		Address: "passthrough:///primary", Token: env.Primary.RuntimeToken(), HostID: t.Name(),
		DialOptions:    []grpc.DialOption{grpc.WithContextDialer(env.DialPrimary)},
		TracerProvider: tel.TracerProvider(),
		OnRegistered: func(string) {
			select {
			case registered <- struct{}{}:
			default:
			}
		},
		Logger: slog.New(slog.DiscardHandler),
	}, toolkits...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("host: %v", err)
		}
	})
	select {
	case <-registered:
	case err := <-done:
		t.Fatalf("host stopped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal(fmt.Errorf("host did not register in 10s"))
	}
}

// A call the runtime makes directly (CallTool) continues the runtime's trace: its dispatch span
// is a child of the span whose traceparent the runtime's request carried.
func TestARuntimesDirectCallContinuesItsTrace(t *testing.T) {
	const (
		traceID    = "5bf92f3577b34da6a3ce929d0e0e4737"
		runtimeSID = "10f067aa0ba902b8"
	)
	sink, tracing := startReceiver(t)
	tel := tracing("mindroom-primary")
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Telemetry = tel }))

	id := env.Open(t)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-"+runtimeSID+"-01")
	res, err := env.Runtime.CallTool(ctx, &responsev1.CallToolRequest{ResponseId: id, CallId: uuid.NewString(),
		Toolkit: "test", Function: "echo", ArgumentsJson: `{"x":1}`, Wait: durationpb.New(5 * time.Second)})
	if err != nil || res.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
		t.Fatalf("CallTool = %v, %v", res, err)
	}
	// The server's span of the call ends after its answer is sent, so the client can hold the
	// answer before that span is exported: flush until the chain is whole, or give up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := tel.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		spans, dispatch := traceOf(sink.Spans(), traceID, "dispatch test.echo")
		if dispatch != nil && reaches(spans, dispatch, runtimeSID) {
			return
		}
		if time.Now().After(deadline) {
			if dispatch == nil {
				t.Fatalf("no dispatch span in the runtime's trace; received %v", sink.Spans())
			}
			t.Fatalf("the dispatch span's parents do not lead to the runtime's span %s: %v", runtimeSID, spans)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A background job started from a traced command gets TRACEPARENT: the trace of the
// run_in_background call that started it, on the primary's host and on a worker alike, so the
// tool calls the job makes continue the runtime's trace.
func TestABackgroundJobContinuesTheTraceThatStartedIt(t *testing.T) {
	const traceID = "6bf92f3577b34da6a3ce929d0e0e4738"
	_, tracing := startReceiver(t)
	tel := tracing("mindroom-primary")
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Telemetry = tel }))
	env.StartWorker(t, "key-a", "worker-a1")
	if code, out := operatorREST(t, env, http.MethodPost, "/v1/operator/conversations:setMode",
		`{"conversation":{"channel":"!room:example.org","thread":"$thread"},"mode":"MODE_ADMIN"}`); code != http.StatusOK {
		t.Fatalf("setMode: %d %v", code, out)
	}

	for _, tc := range []struct{ name, workerKey string }{{"OnThePrimary", ""}, {"OnAWorker", "key-a"}} {
		t.Run(tc.name, func(t *testing.T) {
			id := env.Open(t, func(r *responsev1.OpenResponseRequest) {
				r.WorkerKey, r.RequesterId, r.Flags = tc.workerKey, "admin", []string{"requester_trusted"}
			})
			ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-20f067aa0ba902b9-01")
			run := env.RunBashContext(ctx, t, id, "b-"+tc.name,
				`mindroom-agent tools call interaction.run_in_background '{"command":"echo \"tp=$TRACEPARENT\""}'`, 0)
			m := regexp.MustCompile(`"job_id":(\d+)`).FindStringSubmatch(run.Stdout)
			if run.Result.GetExitCode() != 0 || m == nil {
				t.Fatalf("run_in_background: exit %d stdout %q stderr %q", run.Result.GetExitCode(), run.Stdout, run.Stderr)
			}
			jobID, _ := strconv.ParseInt(m[1], 10, 64)
			var job jobs.Job
			var err error
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if job, err = env.Primary.Internals().Jobs.Get(context.Background(), jobID); err != nil {
					t.Fatal(err)
				}
				if job.Status == store.JobFinished || time.Now().After(deadline) {
					break
				}
			}
			log, err := env.Primary.Internals().Jobs.ReadLog(jobID, job.LogPath, 0, 1<<16)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`tp=00-` + traceID + `-[0-9a-f]{16}-01\n`).Match(log) {
				t.Fatalf("job %d (%s) logged %q; want the runtime's trace in TRACEPARENT", jobID, job.Status, log)
			}
		})
	}
}

// startReceiver starts an OTLP receiver that keeps every span it is sent, and returns it with
// the tracing of a service exporting to it; both stop when the test ends.
func startReceiver(t *testing.T) (*otlpsink.Receiver, func(service string) *telemetry.Telemetry) {
	t.Helper()
	sink, err := otlpsink.Start(true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.Stop)
	return sink, func(service string) *telemetry.Telemetry {
		t.Helper()
		tel, err := telemetry.New(context.Background(), service, func(k string) string {
			return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": sink.Endpoint()}[k]
		})
		if err != nil || !tel.Enabled() {
			t.Fatalf("tracing of %s: enabled %v, %v", service, tel.Enabled(), err)
		}
		t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
		return tel
	}
}
