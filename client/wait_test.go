package client

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const receiptPath = "/api/agent-cli/calls/" + testCallID

// holdWait answers a long-poll GET the way a supporting server does when nothing changes: it
// keeps the request until the asked wait has passed, then answers status.
func holdWait(t *testing.T, w http.ResponseWriter, r *http.Request, status string) {
	secs, err := strconv.ParseFloat(r.URL.Query().Get("wait"), 64)
	if err != nil {
		t.Errorf("bad wait %q", r.URL.RawQuery)
	}
	timer := time.NewTimer(time.Duration(secs * float64(time.Second)))
	defer timer.Stop()
	select {
	case <-timer.C:
		answer(w, 200, receipt(testCallID, status))
	case <-r.Context().Done():
	}
}

// onlyGETsOfTheReceipt checks that every request after the first is a GET of the receipt.
func onlyGETsOfTheReceipt(t *testing.T, reqs []seen) {
	t.Helper()
	for _, r := range reqs[1:] {
		if r.method != http.MethodGet || r.path != receiptPath || r.body != "" {
			t.Fatalf("unexpected request %s %s?%s %q", r.method, r.path, r.query, r.body)
		}
	}
}

func TestLongPollIsUsedWhenSupported(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.Method == http.MethodPost {
			answer(w, 200, receipt(testCallID, StatusQueued))
			return
		}
		answer(w, 200, receipt(testCallID, StatusCompleted)) // a terminal answer may come early
	})
	o := runCLI(t, srv.env(), "", "tools", "call", "weather.forecast", "--call-id", testCallID)
	o.wantCode(t, ExitCompleted)
	if o.stdout != receipt(testCallID, StatusCompleted)+"\n" {
		t.Fatalf("stdout %q", o.stdout)
	}
	reqs := srv.requests()
	if len(reqs) != 2 || reqs[1].query != "wait=25" {
		t.Fatalf("requests %+v, want POST then GET ?wait=25", reqs)
	}
	onlyGETsOfTheReceipt(t, reqs)
	if got := reqs[1].header.Get("Authorization"); got != "Bearer "+testToken {
		t.Fatalf("GET Authorization %q", got)
	}
	if got := reqs[1].header.Get(windowHeader); got != testWindow {
		t.Fatalf("GET window %q", got)
	}
}

func TestWaitIsBoundedByTheTimeout(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.URL.Query().Has("wait") {
			holdWait(t, w, r, StatusRunning)
			return
		}
		answer(w, 200, receipt(testCallID, StatusRunning))
	})
	o := runCLI(t, srv.env(), "", "calls", "wait", testCallID, "--timeout", "0.2")
	o.wantCode(t, ExitPending)
	if o.stdout != receipt(testCallID, StatusRunning)+"\n" {
		t.Fatalf("stdout %q", o.stdout)
	}
	reqs := srv.requests()
	if reqs[0].query != "" {
		t.Fatalf("calls wait did not read at once: %q", reqs[0].query)
	}
	onlyGETsOfTheReceipt(t, append([]seen{{}}, reqs...))
	for _, r := range reqs[1:] {
		secs, err := strconv.ParseFloat(strings.TrimPrefix(r.query, "wait="), 64)
		if err != nil || secs <= 0 || secs > 0.2 {
			t.Fatalf("long-poll query %q, want 0 < wait <= 0.2", r.query)
		}
	}
}

func TestOneEarlyAnswerKeepsLongPolling(t *testing.T) {
	var gets atomic.Int32
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		switch {
		case r.Method == http.MethodPost:
			answer(w, 200, receipt(testCallID, StatusQueued))
		case gets.Add(1) == 1:
			answer(w, 200, receipt(testCallID, StatusRunning)) // e.g. on a status change
		default:
			holdWait(t, w, r, StatusWaiting)
		}
	})
	o := runCLI(t, srv.env(), "", "tools", "call", "weather.forecast", "--call-id", testCallID, "--timeout", "0.3")
	o.wantCode(t, ExitPending)
	if o.stdout != receipt(testCallID, StatusWaiting)+"\n" {
		t.Fatalf("stdout %q", o.stdout)
	}
	for _, r := range srv.requests()[1:] {
		if !strings.HasPrefix(r.query, "wait=") {
			t.Fatalf("fell back to plain polling: %+v", srv.requests())
		}
	}
}

func TestFallbackPollingWhenWaitIsIgnored(t *testing.T) {
	var gets atomic.Int32
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.Method == http.MethodPost || gets.Add(1) < 5 {
			answer(w, 200, receipt(testCallID, StatusRunning))
			return
		}
		answer(w, 200, receipt(testCallID, StatusFailed))
	})
	o := runCLI(t, srv.env(), "", "tools", "call", "weather.forecast", "--call-id", testCallID)
	o.wantCode(t, ExitFailed)
	reqs := srv.requests()
	onlyGETsOfTheReceipt(t, reqs)
	var queries []string
	for _, r := range reqs[1:] {
		queries = append(queries, r.query)
	}
	if want := []string{"wait=25", "wait=25", "", "", ""}; strings.Join(queries, ",") != strings.Join(want, ",") {
		t.Fatalf("queries %q, want two long-polls then plain GETs", queries)
	}
}

func TestFallbackPollingWhenWaitIsRejected(t *testing.T) {
	for _, status := range []int{400, 422} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
				switch {
				case r.Method == http.MethodPost:
					answer(w, 200, receipt(testCallID, StatusQueued))
				case r.URL.Query().Has("wait"):
					answer(w, status, `{"detail":"Invalid query"}`)
				default:
					answer(w, 200, receipt(testCallID, StatusCompleted))
				}
			})
			runCLI(t, srv.env(), "", "tools", "call", "weather.forecast", "--call-id", testCallID).wantCode(t, ExitCompleted)
			reqs := srv.requests()
			if len(reqs) != 3 || !strings.HasPrefix(reqs[1].query, "wait=") || reqs[2].query != "" {
				t.Fatalf("requests %+v", reqs)
			}
		})
	}
}

func TestTimeoutSendsOnlyGETsAndPrintsTheLiveReceipt(t *testing.T) {
	var gets atomic.Int32
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.Method == http.MethodPost {
			answer(w, 200, receipt(testCallID, StatusQueued))
			return
		}
		status := StatusRunning
		if gets.Add(1)%2 == 0 {
			status = StatusWaiting
		}
		answer(w, 200, receipt(testCallID, status))
	})
	o := runCLI(t, srv.env(), "", "tools", "call", "weather.forecast", "--call-id", testCallID, "--timeout", "0.1")
	o.wantCode(t, ExitPending)
	reqs := srv.requests()
	onlyGETsOfTheReceipt(t, reqs)
	last := StatusRunning
	if gets.Load()%2 == 0 {
		last = StatusWaiting
	}
	if o.stdout != receipt(testCallID, last)+"\n" {
		t.Fatalf("stdout %q is not the last receipt (%d GETs)", o.stdout, gets.Load())
	}
}

func TestTimeoutZeroPrintsTheSubmissionReceipt(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		answer(w, 200, receipt(testCallID, StatusQueued))
	})
	o := runCLI(t, srv.env(), "", "tools", "call", "weather.forecast", "--timeout", "0", "--call-id", testCallID)
	o.wantCode(t, ExitPending)
	if len(srv.requests()) != 1 || o.stdout != receipt(testCallID, StatusQueued)+"\n" {
		t.Fatalf("requests %d, stdout %q", len(srv.requests()), o.stdout)
	}
}

func TestTransportFailureWhileWaitingPrintsTheLastReceipt(t *testing.T) {
	failures := map[string]func(w http.ResponseWriter){
		"ConnectionDropped": func(w http.ResponseWriter) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		},
		"InternalError": func(w http.ResponseWriter) { answer(w, 500, `{"detail":"boom"}`) },
		"InvalidBody":   func(w http.ResponseWriter) { answer(w, 200, `{"status":`) },
		"Redirect":      func(w http.ResponseWriter) { w.Header().Set("Location", "/x"); w.WriteHeader(302) },
	}
	for name, fail := range failures {
		t.Run(name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
				if r.Method == http.MethodPost {
					answer(w, 200, receipt(testCallID, StatusQueued))
					return
				}
				fail(w)
			})
			o := runCLI(t, srv.env(), "", "tools", "call", "weather.forecast", "--call-id", testCallID)
			o.wantCode(t, ExitPending)
			if o.stdout != receipt(testCallID, StatusQueued)+"\n" {
				t.Fatalf("stdout %q", o.stdout)
			}
			if !strings.Contains(o.stderr, "mindroom-agent calls wait "+testCallID) || strings.Contains(o.stderr, testToken) {
				t.Fatalf("stderr %q", o.stderr)
			}
			// net/http may replay a GET once on a fresh connection; the POST is never repeated.
			if reqs := srv.requests(); reqs[0].method != http.MethodPost {
				t.Fatalf("first request %s", reqs[0].method)
			} else {
				onlyGETsOfTheReceipt(t, reqs)
			}
		})
	}
}

func TestInterruptWhileWaitingPrintsTheLastReceipt(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.Method == http.MethodPost {
			answer(w, 200, receipt(testCallID, StatusRunning))
			return
		}
		cancel() // the user presses Ctrl-C during the long-poll
		<-r.Context().Done()
	})
	var stdout, stderr strings.Builder
	a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, pollInterval: time.Millisecond,
		getenv: func(k string) string { return srv.env()[k] }, random: strings.NewReader(strings.Repeat("r", 16))}
	if code := a.run(ctx, []string{"tools", "call", "k.f"}); code != ExitPending {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), `"status":"running"`) || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

func TestUnauthorizedWhileWaitingIsAuthorityUnavailable(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.Method == http.MethodPost {
			answer(w, 200, receipt(testCallID, StatusQueued))
			return
		}
		answer(w, 401, `{"detail":"Agent CLI authority is unavailable"}`)
	})
	o := runCLI(t, srv.env(), "", "tools", "call", "weather.forecast", "--call-id", testCallID)
	if m := o.wantError(t, ExitUnavailable, "Agent CLI authority is unavailable"); m["call_id"] != testCallID {
		t.Fatalf("call_id %v", m["call_id"])
	}
}

func TestCallsGet(t *testing.T) {
	for status, code := range map[string]int{StatusCompleted: 0, StatusFailed: 1, StatusCancelled: 1, StatusQueued: 3, StatusRunning: 3, StatusWaiting: 3} {
		t.Run(status, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
				answer(w, 200, receipt(testCallID, status))
			})
			o := runCLI(t, srv.env(), "", "calls", "get", strings.ToUpper(testCallID))
			o.wantCode(t, code)
			reqs := srv.requests()
			if len(reqs) != 1 || reqs[0].method != http.MethodGet || reqs[0].path != receiptPath || reqs[0].query != "" {
				t.Fatalf("requests %+v", reqs)
			}
		})
	}
	t.Run("ErrorsNameTheCallID", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
			answer(w, 401, `{"detail":"Agent CLI authority is unavailable"}`)
		})
		if m := runCLI(t, srv.env(), "", "calls", "get", testCallID).wantError(t, ExitUnavailable, "authority"); m["call_id"] != testCallID {
			t.Fatalf("call_id %v", m["call_id"])
		}
	})
}

func TestCallsWaitTimeoutZeroReadsOnce(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		answer(w, 200, receipt(testCallID, StatusRunning))
	})
	runCLI(t, srv.env(), "", "calls", "wait", testCallID, "--timeout=0").wantCode(t, ExitPending)
	if n := len(srv.requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

func TestFormatSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		25 * time.Second:                         "25",
		1500 * time.Millisecond:                  "1.5",
		1999*time.Millisecond + time.Microsecond: "1.999",
		time.Millisecond:                         "0.001",
	} {
		if got := formatSeconds(d); got != want {
			t.Errorf("formatSeconds(%v) = %q, want %q", d, got, want)
		}
	}
}
