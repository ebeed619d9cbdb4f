package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// TestDurableTransitionsPages counts the pages an approval's decision and a job's end write to
// the WAL, which is most of what their commit costs beyond a single-row insert's one page
// (docs/PERFORMANCE.md, durable): one page for each b-tree the transaction changes, and now and
// then one more where a b-tree splits. An index added on either path shows here first.
//
// A decision changes seven b-trees: the approval, its status index and its pending-key index,
// the audit entry with its subject and actor indexes, and the thread feed's event. A job's end
// six: the continuation with its idempotency-key and pending indexes, the job with its index of
// running jobs, and the event.
func TestDurableTransitionsPages(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pageSize int64
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}

	const n = 50
	approvals, jobs := make([]int64, n), make([]int64, n)
	for i := range n {
		ap, _, err := s.SaveApproval(ctx, store.NewApproval{Kind: "command", Channel: "!c", Thread: "t",
			Command: "true " + strconv.Itoa(i), Workdir: "/"})
		if err != nil {
			t.Fatal(err)
		}
		j, err := s.CreateJob(ctx, store.NewJob{Kind: "command", Command: "true", Channel: "!c", Thread: "t",
			LogDir: "/nonexistent"}, store.JobCaps{})
		if err != nil {
			t.Fatal(err)
		}
		approvals[i], jobs[i] = ap.ID, j.ID
	}
	// pagesEach runs do n times on an emptied WAL and returns the pages written per run: the
	// WAL is a 32-byte header and then frames, each a 24-byte header and a page.
	pagesEach := func(do func(i int) error) float64 {
		t.Helper()
		if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := do(i); err != nil {
				t.Fatal(err)
			}
		}
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return float64((fi.Size()-32)/(pageSize+24)) / n
	}
	code := 0
	for _, tc := range []struct {
		name string
		do   func(i int) error
		most float64
	}{
		{"ApprovalDecision", func(i int) error {
			_, err := s.BeginApproval(ctx, approvals[i], "admin")
			return err
		}, 7.2},
		{"JobEndWithContinuation", func(i int) error {
			_, _, err := s.FinishJob(ctx, jobs[i], store.JobResult{Outcome: "success", ExitCode: &code},
				store.NewContinuation{IdempotencyKey: "job:" + strconv.Itoa(i), Channel: "!c", Text: "done"})
			return err
		}, 6.2},
	} {
		got := pagesEach(tc.do)
		t.Logf("%s: %.2f pages per commit", tc.name, got)
		if got > tc.most {
			t.Errorf("%s writes %.2f pages per commit, more than %.1f: which b-tree joined it?", tc.name, got, tc.most)
		}
		if got < 1 {
			t.Errorf("%s writes %.2f pages per commit: the WAL was not measured", tc.name, got)
		}
	}
}
