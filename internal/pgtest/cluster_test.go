package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/turncli/turncli/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestNewDatabase(t *testing.T) {
	ctx := context.Background()
	t.Run("EachTestGetsItsOwnEmptyDatabase", func(t *testing.T) {
		a, b := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
		if a == b {
			t.Fatalf("two databases share the URL %s", a)
		}
		conn, err := pgx.Connect(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `CREATE TABLE mine (x int)`); err != nil {
			t.Fatal(err)
		}
		other, err := pgx.Connect(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close(ctx)
		var n int
		if err := other.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'mine'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("the other database sees %d tables named mine (%v)", n, err)
		}
	})
}

func TestStart(t *testing.T) {
	t.Run("AStoppedClusterLeavesNoDirectory", func(t *testing.T) {
		pgtest.Require(t) // skips where no server can run
		ctx := context.Background()
		c, err := pgtest.Start(ctx, pgtest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		url, err := c.CreateDatabase(ctx, "own")
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := pgx.Connect(ctx, url); err == nil {
			t.Fatal("connected to a stopped cluster")
		}
		if _, err := os.Stat(c.Dir()); !os.IsNotExist(err) {
			t.Fatalf("cluster directory after Stop: %v", err)
		}
	})
}
