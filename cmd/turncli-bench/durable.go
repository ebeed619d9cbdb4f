package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/postgres"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// durableBackend is one store under measure and the floor beside it: one row inserted in its
// own transaction, on the same database with the same durability.
type durableBackend struct {
	name  string
	store store.Store
	floor func(ctx context.Context, i int) error
	close func()
}

// measureDurable times the two transitions that decide a conversation's durable state,
// an approval's decision and a job's end with its continuation, one at a time, on SQLite and
// on PostgreSQL (a cluster of its own, durable, on disk), each beside a single-row insert on
// the same database in the same round. PostgreSQL's rows say why when no server can start.
func measureDurable(ctx context.Context, b *bench) ([]row, error) {
	var rows []row
	for _, open := range []func(context.Context) (*durableBackend, error){openSQLiteBackend, openPostgresBackend} {
		be, err := open(ctx)
		if err != nil {
			var unavailable errPostgresUnavailable
			if errors.As(err, &unavailable) {
				rows = append(rows, row{key: "durable.postgres", measure: "durable transitions, PostgreSQL",
					unit: txPerSec, target: target{kind: recordedValue, text: "recorded"}, note: "not measured: " + err.Error()})
				continue
			}
			return nil, err
		}
		got, err := durableRows(ctx, b, be)
		be.close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", be.name, err)
		}
		rows = append(rows, got...)
	}
	return rows, nil
}

// durableRows measures be's transitions, each round against the floor measured right after.
func durableRows(ctx context.Context, b *bench, be *durableBackend) ([]row, error) {
	n := b.cfg.scale.durableOps
	transitions := []struct {
		key, what string
		setup     func(ctx context.Context, i int) (int64, error)
		timed     func(ctx context.Context, id int64) error
	}{
		{"decide", "approval decide", func(ctx context.Context, i int) (int64, error) {
			ap, _, err := be.store.SaveApproval(ctx, store.NewApproval{Kind: "command", Channel: "!bench", Thread: "t",
				Command: "true # " + strconv.Itoa(i) + " " + time.Now().String(), Workdir: "/"})
			return ap.ID, err
		}, func(ctx context.Context, id int64) error {
			_, err := be.store.BeginApproval(ctx, id, "bench")
			return err
		}},
		{"finish", "job finish with continuation", func(ctx context.Context, i int) (int64, error) {
			j, err := be.store.CreateJob(ctx, store.NewJob{Kind: "command", Command: "true", Channel: "!bench", Thread: "t",
				LogDir: "/nonexistent"}, store.JobCaps{})
			return j.ID, err
		}, func(ctx context.Context, id int64) error {
			code := 0
			_, _, err := be.store.FinishJob(ctx, id, store.JobResult{Outcome: "success", ExitCode: &code},
				store.NewContinuation{IdempotencyKey: "job:" + strconv.FormatInt(id, 10), Channel: "!bench", Text: "done"})
			return err
		}},
	}
	var rows []row
	floorRun := 0
	for _, tr := range transitions {
		r := row{key: "durable." + be.name + "." + tr.key, measure: fmt.Sprintf("durable %s, %s (1 writer)", tr.what, be.name),
			unit: txPerSec, target: target{kind: recordedValue, text: "recorded"}}
		for round := range b.cfg.scale.rounds {
			ids := make([]int64, n)
			for i := range ids {
				id, err := tr.setup(ctx, round*n+i)
				if err != nil {
					return nil, fmt.Errorf("%s setup: %w", tr.what, err)
				}
				ids[i] = id
			}
			start := time.Now()
			for _, id := range ids {
				if err := tr.timed(ctx, id); err != nil {
					return nil, fmt.Errorf("%s: %w", tr.what, err)
				}
			}
			value := float64(n) / time.Since(start).Seconds()
			start = time.Now()
			for range n {
				floorRun++
				if err := be.floor(ctx, floorRun); err != nil {
					return nil, fmt.Errorf("floor: %w", err)
				}
			}
			floor := float64(n) / time.Since(start).Seconds()
			r.rounds, r.floors = append(r.rounds, value), append(r.floors, floor)
			r.ratios = append(r.ratios, value/floor)
		}
		r.value, r.floor = median(r.rounds), median(r.floors)
		r.note = "floor: one row inserted and committed alone on the same database"
		rows = append(rows, r)
	}
	return rows, nil
}

// openSQLiteBackend is the SQLite store in a new temporary directory; its floor writes through
// a second handle on the file with the store's durability (WAL, synchronous=FULL).
func openSQLiteBackend(ctx context.Context) (*durableBackend, error) {
	dir, err := os.MkdirTemp("", "turncli-bench-sqlite-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, sqlite.FileName)
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)&_pragma=journal_mode(WAL)")
	if err == nil {
		_, err = db.ExecContext(ctx, `CREATE TABLE bench_floor (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)`)
	}
	if err != nil {
		s.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &durableBackend{name: "SQLite", store: s,
		floor: func(ctx context.Context, i int) error {
			_, err := db.ExecContext(ctx, `INSERT INTO bench_floor (v) VALUES (?)`, i)
			return err
		},
		close: func() { db.Close(); s.Close(); os.RemoveAll(dir) },
	}, nil
}

// errPostgresUnavailable: no PostgreSQL server could be started here.
type errPostgresUnavailable struct{ err error }

func (e errPostgresUnavailable) Error() string { return e.err.Error() }

// openPostgresBackend is the PostgreSQL store on a durable cluster of its own; its floor
// inserts through one more connection.
func openPostgresBackend(ctx context.Context) (*durableBackend, error) {
	c, err := pgtest.Start(ctx, pgtest.Options{Durable: true})
	if err != nil {
		return nil, errPostgresUnavailable{err}
	}
	url, err := c.CreateDatabase(ctx, "bench")
	if err != nil {
		c.Stop()
		return nil, err
	}
	s, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		c.Stop()
		return nil, err
	}
	conn, err := pgx.Connect(ctx, url)
	if err == nil {
		_, err = conn.Exec(ctx, `CREATE TABLE bench_floor (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v BIGINT NOT NULL)`)
	}
	if err != nil {
		s.Close()
		c.Stop()
		return nil, err
	}
	return &durableBackend{name: "PostgreSQL", store: s,
		floor: func(ctx context.Context, i int) error {
			_, err := conn.Exec(ctx, `INSERT INTO bench_floor (v) VALUES ($1)`, i)
			return err
		},
		close: func() { conn.Close(context.Background()); s.Close(); c.Stop() },
	}, nil
}
