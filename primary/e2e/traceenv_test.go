package e2e

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// With tracing off, a runtime's traceparent still reaches the shell: the non-recording spans
// keep the context they were started in.
func TestTheRuntimesTraceparentReachesTheShell(t *testing.T) {
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	env := testenv.Start(t)
	env.StartWorker(t, "key-a", "worker-a1")
	for _, tc := range []struct {
		name, workerKey string
		md              []string
		want            string
	}{
		{name: "PrimaryShellGetsIt", md: []string{"traceparent", traceparent, "tracestate", "vendor=1"}, want: traceparent + " vendor=1"},
		{name: "WorkerShellGetsIt", workerKey: "key-a", md: []string{"traceparent", traceparent}, want: traceparent + " "},
		{name: "NoTraceparentSetsNone", md: nil, want: " "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = tc.workerKey })
			ctx := metadata.AppendToOutgoingContext(context.Background(), tc.md...)
			run := env.RunBashContext(ctx, t, id, "b1", `echo "${TRACEPARENT-} ${TRACESTATE-}"`, 0)
			if got := strings.TrimSuffix(run.Stdout, "\n"); got != tc.want {
				t.Fatalf("shell saw %q, want %q (stderr %q)", got, tc.want, run.Stderr)
			}
		})
	}
}
