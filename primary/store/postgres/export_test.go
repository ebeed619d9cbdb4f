package postgres

import (
	"context"
	"sync"
	"testing"
)

// Connect connects to the database at url directly, as another program would, until the test
// ends.
var Connect = connect

// OpenTogether opens n drivers on url at once, as n primaries starting together do, and
// closes them; any open failing fails the test.
var OpenTogether = openTogether

func openTogether(t *testing.T, url string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			d, err := OpenDriver(context.Background(), url, Options{})
			if err != nil {
				errs <- err
				return
			}
			d.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("OpenDriver: %v", err)
	}
}

// MaxConns is the bound of d's pool, for tests.
func (d *Driver) MaxConns() int32 { return d.pool.Config().MaxConns }
