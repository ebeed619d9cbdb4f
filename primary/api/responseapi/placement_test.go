package responseapi_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
)

// TestAStoredMinimalModeAppliesOnlyWhereItWasChecked: a minimal mode stored for one placement
// (the primary's own shells, or a worker key) opens minimal only there; a response placed
// anywhere else, or whose toolkits leave out the shell toolkit, opens standard.
func TestAStoredMinimalModeAppliesOnlyWhereItWasChecked(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	env.StartWorker(t, "key-a", "w1")
	env.StartWorker(t, "key-b", "w2")
	modeOf := func(t *testing.T, workerKey string, toolkits ...string) string {
		t.Helper()
		req := openReq(responsev1.ShellMode_SHELL_MODE_UNSPECIFIED)
		req.WorkerKey, req.Toolkits = workerKey, toolkits
		resp, err := env.Runtime.OpenResponse(ctx, req)
		if err != nil {
			t.Fatalf("OpenResponse on %q: %v", workerKey, err)
		}
		defer env.Runtime.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
		r, ok := env.Primary.Internals().Responses.Get(resp.GetResponseId())
		if !ok {
			t.Fatalf("response %s is not open", resp.GetResponseId())
		}
		return r.Inspect(0).ShellMode
	}
	for _, tc := range []struct {
		name, storedFor, openOn string
		toolkits                []string
		want                    string
	}{
		{"SetForLocalShellsUsedLocally", "", "", nil, "minimal"},
		{"SetForLocalShellsUsedOnAnUnknownWorkerKey", "", "key-unknown", nil, "standard"},
		{"SetForLocalShellsUsedOnAConnectedWorkerKey", "", "key-a", nil, "standard"},
		{"SetForAWorkerKeyUsedThere", "key-a", "key-a", nil, "minimal"},
		{"SetForAWorkerKeyUsedLocally", "key-a", "", nil, "standard"},
		{"SetForAWorkerKeyUsedOnAnother", "key-a", "key-b", nil, "standard"},
		{"ToolkitsWithTheShellToolkit", "", "", []string{"test", "sh*"}, "minimal"},
		{"ToolkitsWithoutTheShellToolkit", "", "", []string{"test", "interaction"}, "standard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := env.Primary.Internals().Store.SetShellMode(ctx, "!room:example.org", "$thread", "tester", store.ShellModeMinimal, tc.storedFor, "ada"); err != nil {
				t.Fatal(err)
			}
			if got := modeOf(t, tc.openOn, tc.toolkits...); got != tc.want {
				t.Errorf("minimal stored for %q, response on %q with toolkits %q opens %s, want %s", tc.storedFor, tc.openOn, tc.toolkits, got, tc.want)
			}
		})
	}
}

// TestAnExplicitMinimalModeNeedsTheShellToolkitInTheSelection: the preflight of a response
// that names the minimal mode checks its toolkit selection too; one that leaves out the shell
// toolkit is refused with that problem and its fix.
func TestAnExplicitMinimalModeNeedsTheShellToolkitInTheSelection(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	req := openReq(responsev1.ShellMode_SHELL_MODE_MINIMAL)
	req.Toolkits = []string{"test"}
	before := len(env.Primary.Internals().Responses.List())
	_, err := env.Runtime.OpenResponse(ctx, req)
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("OpenResponse: %v, want FailedPrecondition", err)
	}
	const want = `the minimal shell mode cannot be used for agent "tester"; no response was opened. 1 problem(s): ` +
		`(1) the response's toolkit selection ("test") leaves out the "shell" toolkit, so its shell would have no shell functions. ` +
		`Fix: add "shell" to the response's toolkits, or open it in the standard shell mode.`
	if got := status.Convert(err).Message(); got != want {
		t.Errorf("message:\n%s\nwant:\n%s", got, want)
	}
	var checks []string
	for _, d := range status.Convert(err).Details() {
		if pf, ok := d.(*errdetails.PreconditionFailure); ok {
			for _, v := range pf.GetViolations() {
				checks = append(checks, v.GetType())
			}
		}
	}
	if strings.Join(checks, ",") != "shell_toolkit" {
		t.Errorf("violations %v, want shell_toolkit", checks)
	}
	if after := len(env.Primary.Internals().Responses.List()); after != before {
		t.Errorf("%d responses open after the refused open, %d before", after, before)
	}
	req.Toolkits = []string{"test", "shell"}
	resp, err := env.Runtime.OpenResponse(ctx, req)
	if err != nil {
		t.Fatalf("OpenResponse with the shell toolkit selected: %v", err)
	}
	env.Runtime.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
}
