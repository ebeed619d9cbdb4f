package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/primary/store/postgres"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// TestADurableApprovalSurvivesARestartOnPostgreSQL runs the real primary on a PostgreSQL
// store: an approval made pending by the first primary, killed, is decided through the
// second, whose job runs the command once and tells the conversation once; the state
// directory holds no SQLite file.
func TestADurableApprovalSurvivesARestartOnPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	ctx := context.Background()
	url, err := pgtest.StartForTest(t).CreateDatabase(ctx, "turncli")
	if err != nil {
		t.Fatal(err)
	}
	bin := mpBuild(t)
	state, work := shellTempDir(t), shellprivtest.BinaryDir(t)
	grpcAddr := freeLoopbackAddr(t)
	first, _ := startRestartPrimary(t, "mindroom-primary (first)", bin, state, grpcAddr, "--store", url)
	first.setMode(t, "$approve", operatorv1.Mode_MODE_AUTO)
	runs := filepath.Join(work, "approved.runs")
	pending := first.background(t, "", "$approve", "echo run >> "+runs, "approval_id")
	if code := first.proc.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("primary exit code %d after SIGKILL", code)
	}

	second, _ := startRestartPrimary(t, "mindroom-primary (second)", bin, state, grpcAddr, "--store", url)
	if ap := second.approval(t, pending); ap.GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_PENDING {
		t.Fatalf("approval after the restart: %v, want pending", ap.GetStatus())
	}
	decide := func() (*operatorv1.DecideApprovalResponse, error) {
		ctx, cancel := bearerCtx(second.admin)
		defer cancel()
		return second.operator.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: uint64(pending), Decision: operatorv1.Decision_DECISION_APPROVE})
	}
	resp, err := decide()
	if err != nil {
		t.Fatalf("approve after the restart: %v", err)
	}
	job := int64(resp.GetApproval().GetJobId())
	if j := second.awaitJob(t, job, "finished", finished); j.GetOutcome() != "success" {
		t.Errorf("approved job: %q", j.GetOutcome())
	}
	if _, err := decide(); status.Code(err) != codes.Aborted {
		t.Errorf("replayed approval: %v, want Aborted", err)
	}
	if n := lines(t, runs); n != 1 {
		t.Errorf("the approved command ran %d times", n)
	}
	if code := second.proc.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("second primary exit code %d", code)
	}

	if _, err := os.Stat(filepath.Join(state, sqlite.FileName)); !os.IsNotExist(err) {
		t.Errorf("a SQLite file in the state directory: %v", err)
	}
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cs, err := db.PendingContinuations(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	told := 0
	for _, c := range cs {
		if c.IdempotencyKey == "job:"+strconv.FormatInt(job, 10) {
			told++
		}
	}
	if told != 1 {
		t.Errorf("job %d has %d continuations, want 1 (all: %v)", job, told, cs)
	}
}
