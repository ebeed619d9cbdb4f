package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// shared is the cluster of this test binary, started by the first test that needs it.
var shared struct {
	once    sync.Once
	cluster *Cluster
	err     error

	mu        sync.Mutex
	templates map[string]error // prepared templates by name, and how preparing them ended
}

// Shared returns the cluster this test binary's tests share, starting it on first use. A
// package whose tests use it stops it in TestMain through Main.
func Shared() (*Cluster, error) {
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.cluster, shared.err = Start(ctx, Options{})
	})
	return shared.cluster, shared.err
}

// Main runs the tests of m and then stops the shared cluster, if one was started; it returns
// the exit code for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.cluster != nil {
		if err := shared.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stop the cluster:", err)
		}
	}
	return code
}

// NewDatabase creates a fresh empty database on the shared cluster and returns its URL. It
// skips the test when PostgreSQL cannot be started, or fails it when RequireEnv is 1.
func NewDatabase(t testing.TB) string {
	t.Helper()
	c := Require(t)
	url, err := c.CreateDatabase(context.Background(), c.newName())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// NewPreparedDatabase creates a fresh database on the shared cluster as a copy of the
// template named template, which prepare makes (given its URL, and closing every connection
// to it before it returns) the first time a test of this binary asks for it, and returns its
// URL. Tests that each need a migrated database copy one migration instead of running it.
// It skips or fails the test as NewDatabase does.
func NewPreparedDatabase(t testing.TB, template string, prepare func(ctx context.Context, url string) error) string {
	t.Helper()
	c := Require(t)
	ctx := context.Background()
	shared.mu.Lock()
	err, done := shared.templates[template]
	if !done {
		var url string
		if url, err = c.CreateDatabase(ctx, template); err == nil {
			err = prepare(ctx, url)
		}
		if shared.templates == nil {
			shared.templates = map[string]error{}
		}
		shared.templates[template] = err
	}
	shared.mu.Unlock()
	if err != nil {
		t.Fatalf("pgtest: prepare template %s: %v", template, err)
	}
	url, err := c.CreateDatabaseFrom(ctx, c.newName(), template)
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// Require returns the shared cluster, or skips (fails when RequireEnv is 1) the test when
// none can be started.
func Require(t testing.TB) *Cluster {
	t.Helper()
	c, err := Shared()
	if err != nil {
		unavailable(t, err)
	}
	return c
}

// StartForTest starts a cluster of the test's own, stopped and removed when the test ends, for
// a test that runs the processes using it (a primary, a failover). It skips or fails the test
// as NewDatabase does when no server can be started.
func StartForTest(t testing.TB) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{})
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("pgtest: stop the cluster: %v", err)
		}
	})
	return c
}

// unavailable ends a test that needs PostgreSQL when none could be started: a skip on a
// developer's machine, a failure where RequireEnv is 1.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("PostgreSQL is required (%s=1): %v", RequireEnv, err)
	}
	t.Skipf("PostgreSQL unavailable, test skipped (set %s=1 to fail instead): %v", RequireEnv, err)
}
