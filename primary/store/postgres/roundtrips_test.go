package postgres_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/postgres"
)

// The transitions people and jobs wait on send every statement with their COMMIT, in one round
// trip to the server: a round trip wakes the server's backend and this process, which under
// load is most of a short transaction's time. Each is counted on its second run, when its
// statements are prepared, as the least of three (a connection idle for a second is pinged
// before it is used, which adds one).
func TestDurableTransitionsRoundTrips(t *testing.T) {
	ctx := context.Background()
	direct := pgtest.NewDatabase(t)
	for _, fenced := range []bool{false, true} {
		t.Run("Fence"+strconv.FormatBool(fenced), func(t *testing.T) {
			opts := postgres.Options{}
			if fenced {
				opts.Fence = 1
				conn := postgres.Connect(t, direct)
				if _, err := conn.Exec(ctx, `UPDATE leader_fence SET fence = 1 WHERE id = 1`); err != nil {
					t.Fatal(err)
				}
			}
			counter := countRoundTrips(t, direct)
			s := store.New(openDriver(t, counter.url, opts), store.Options{})
			decide := func(i int) int64 {
				ap, _, err := s.SaveApproval(ctx, store.NewApproval{Kind: "command", Channel: "!c", Thread: strconv.FormatBool(fenced),
					Command: "true " + strconv.Itoa(i), Workdir: "/"})
				if err != nil {
					t.Fatal(err)
				}
				return counter.during(func() {
					if _, err := s.BeginApproval(ctx, ap.ID, "admin"); err != nil {
						t.Fatal(err)
					}
				})
			}
			finish := func(i int) int64 {
				j, err := s.CreateJob(ctx, store.NewJob{Kind: "command", Command: "true", Channel: "!c", LogDir: "/logs"}, store.JobCaps{})
				if err != nil {
					t.Fatal(err)
				}
				return counter.during(func() {
					code := 0
					if _, _, err := s.FinishJob(ctx, j.ID, store.JobResult{Outcome: "success", ExitCode: &code},
						store.NewContinuation{IdempotencyKey: "job:" + strconv.FormatInt(j.ID, 10), Channel: "!c", Text: "done"}); err != nil {
						t.Fatal(err)
					}
				})
			}
			for _, tr := range []struct {
				name string
				run  func(int) int64
				want int64
			}{
				{"ApprovalDecision", decide, 1},
				{"JobEndWithContinuation", finish, 1},
			} {
				tr.run(0)
				least := tr.run(1)
				for i := 2; i <= 3; i++ {
					least = min(least, tr.run(i))
				}
				if least != tr.want {
					t.Errorf("%s: %d round trips, want %d", tr.name, least, tr.want)
				}
			}
		})
	}
}

// roundTrips relays connections to a database's server and counts the requests on them: a
// request is what a client sends before the server answers, however many writes carry it.
type roundTrips struct {
	url      string // the database through the relay
	requests atomic.Int64
}

// countRoundTrips starts a relay in front of the server of the database at dbURL.
func countRoundTrips(t *testing.T, dbURL string) *roundTrips {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	server := filepath.Join(q.Get("host"), ".s.PGSQL."+q.Get("port"))
	dir, err := os.MkdirTemp("", "relay-") // a socket's path must be short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	lis, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL."+q.Get("port")))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { lis.Close(); wg.Wait() })
	r := &roundTrips{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := lis.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.relay(client, server)
			}()
		}
	}()
	q.Set("host", dir)
	u.RawQuery = q.Encode()
	r.url = u.String()
	return r
}

// relay copies one connection both ways, counting each turn from the server's answer to the
// client's next request.
func (r *roundTrips) relay(client net.Conn, server string) {
	defer client.Close()
	upstream, err := net.Dial("unix", server)
	if err != nil {
		return
	}
	defer upstream.Close()
	var mu sync.Mutex
	answered := true // the next bytes from the client begin a request
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, err := upstream.Read(buf)
			if n > 0 {
				mu.Lock()
				answered = true
				mu.Unlock()
				if _, werr := client.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				client.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			mu.Lock()
			if answered {
				r.requests.Add(1)
				answered = false
			}
			mu.Unlock()
			if _, werr := upstream.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	upstream.Close()
	<-done
}

// during runs f and returns the requests it made.
func (r *roundTrips) during(f func()) int64 {
	before := r.requests.Load()
	f()
	return r.requests.Load() - before
}
