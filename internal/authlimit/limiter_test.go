package authlimit_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/clock/clocktest"
)

const (
	burst = 3
	every = 10 * time.Second
)

func newLimiter(t *testing.T, maxAddrs int) (*authlimit.Limiter, *clocktest.Fake, *bytes.Buffer) {
	t.Helper()
	clk := clocktest.NewFake(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	var logs bytes.Buffer
	l, err := authlimit.New(authlimit.Config{Burst: burst, Every: every, MaxAddrs: maxAddrs, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return l, clk, &logs
}

// refuse counts n refusals from addr and returns the last answer.
func refuse(l *authlimit.Limiter, addr string, n int) (time.Duration, bool) {
	var retry time.Duration
	var limited bool
	for range n {
		retry, limited = l.Fail(netip.MustParseAddr(addr))
	}
	return retry, limited
}

func TestLimiter(t *testing.T) {
	t.Run("TheBurstThRefusalIsAnsweredNormallyTheNextIsLimited", func(t *testing.T) {
		l, _, _ := newLimiter(t, 0)
		for i := 1; i <= burst; i++ {
			if _, limited := refuse(l, "192.0.2.1", 1); limited {
				t.Fatalf("refusal %d of %d is limited", i, burst)
			}
		}
		if retry, limited := refuse(l, "192.0.2.1", 1); !limited || retry != every {
			t.Fatalf("refusal %d: limited %v, retry %v; want limited, retry %v", burst+1, limited, retry, every)
		}
	})
	t.Run("AfterTheRetryDelayOneMoreRefusalIsAnsweredNormally", func(t *testing.T) {
		l, clk, _ := newLimiter(t, 0)
		retry, _ := refuse(l, "192.0.2.1", burst+5)
		clk.Advance(retry - time.Nanosecond)
		if _, limited := refuse(l, "192.0.2.1", 1); !limited {
			t.Fatal("a refusal just before the retry delay passed is not limited")
		}
		clk.Advance(time.Nanosecond)
		if _, limited := refuse(l, "192.0.2.1", 1); limited {
			t.Fatal("a refusal once the retry delay passed is limited")
		}
		if retry, limited := refuse(l, "192.0.2.1", 1); !limited || retry != every {
			t.Fatalf("the refusal after it: limited %v, retry %v; want limited, retry %v", limited, retry, every)
		}
	})
	t.Run("ABucketRefillsToItsBurstAndNoFurther", func(t *testing.T) {
		l, clk, _ := newLimiter(t, 0)
		refuse(l, "192.0.2.1", burst)
		clk.Advance(100 * every)
		if _, limited := refuse(l, "192.0.2.1", burst); limited {
			t.Fatal("a refilled bucket does not take its burst")
		}
		if _, limited := refuse(l, "192.0.2.1", 1); !limited {
			t.Fatal("a long idle address earned more than its burst")
		}
	})
	t.Run("AddressesAreCountedApart", func(t *testing.T) {
		l, _, _ := newLimiter(t, 0)
		refuse(l, "192.0.2.1", burst+1)
		if _, limited := refuse(l, "192.0.2.2", burst); limited {
			t.Fatal("another address is limited by the first one's refusals")
		}
	})
	t.Run("AnIPv6HostIsCountedByItsSlash64", func(t *testing.T) {
		l, _, _ := newLimiter(t, 0)
		refuse(l, "2001:db8:1:2::1", burst)
		if _, limited := refuse(l, "2001:db8:1:2:ffff::9", 1); !limited {
			t.Fatal("another address of the same /64 has a budget of its own")
		}
		if _, limited := refuse(l, "2001:db8:1:3::1", 1); limited {
			t.Fatal("an address of another /64 is limited")
		}
	})
	t.Run("AnIPv4MappedAddressIsItsIPv4Address", func(t *testing.T) {
		l, _, _ := newLimiter(t, 0)
		refuse(l, "::ffff:192.0.2.1", burst)
		if _, limited := refuse(l, "192.0.2.1", 1); !limited {
			t.Fatal("the IPv4 address is counted apart from its mapped form")
		}
	})
	t.Run("ATableFullOfBusyAddressesSendsNewOnesToOneSharedBucket", func(t *testing.T) {
		l, _, _ := newLimiter(t, 2)
		refuse(l, "192.0.2.1", 1)
		refuse(l, "192.0.2.2", 1)
		refuse(l, "192.0.2.3", burst)
		if _, limited := refuse(l, "192.0.2.4", 1); !limited {
			t.Fatal("two untracked addresses do not share one bucket")
		}
		if _, limited := refuse(l, "192.0.2.1", burst-1); limited {
			t.Fatal("a tracked address lost its own bucket")
		}
	})
	t.Run("AnIdleAddressIsForgottenAndMakesRoom", func(t *testing.T) {
		l, clk, _ := newLimiter(t, 1)
		refuse(l, "192.0.2.1", 1)
		clk.Advance(every)
		refuse(l, "192.0.2.2", burst) // its own entry, not the overflow bucket
		if _, limited := refuse(l, "192.0.2.3", burst); limited {
			t.Fatal("the overflow bucket took the refusals of the address that replaced an idle one")
		}
	})
	t.Run("ALimitedAddressIsLoggedOncePerWindow", func(t *testing.T) {
		l, clk, logs := newLimiter(t, 0)
		refuse(l, "192.0.2.1", burst+100)
		if n := strings.Count(logs.String(), "refused credentials limited"); n != 1 {
			t.Fatalf("%d log lines for one window of refusals, want 1:\n%s", n, logs)
		}
		clk.Advance(burst * every)
		refuse(l, "192.0.2.1", burst+1)
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(lines) != 2 || !strings.Contains(lines[1], "addr=192.0.2.1") || !strings.Contains(lines[1], "limited=1") {
			t.Fatalf("log after a window, want a second line for 192.0.2.1 with limited=1:\n%s", logs)
		}
	})
	t.Run("NegativeLimitsAreRefused", func(t *testing.T) {
		for _, cfg := range []authlimit.Config{{Burst: -1}, {Every: -time.Second}, {MaxAddrs: -1}} {
			if _, err := authlimit.New(cfg); err == nil {
				t.Errorf("New(%+v) succeeded", cfg)
			}
		}
	})
}

func TestFailHTTP(t *testing.T) {
	t.Run("TheClientAddressIsCounted", func(t *testing.T) {
		l, _, _ := newLimiter(t, 0)
		r := &http.Request{RemoteAddr: "127.0.0.1:40000"}
		for range burst {
			l.FailHTTP(r)
		}
		if _, limited := l.FailHTTP(&http.Request{RemoteAddr: "127.0.0.1:40001"}); !limited {
			t.Fatal("another port of the same address has a budget of its own")
		}
	})
	t.Run("AClientWithoutAnIPAddressIsNeverLimited", func(t *testing.T) {
		l, _, _ := newLimiter(t, 0)
		for range burst + 5 {
			if _, limited := l.FailHTTP(&http.Request{RemoteAddr: "pipe"}); limited {
				t.Fatal("a request without a client address was limited")
			}
		}
	})
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		retry time.Duration
		want  string
	}{
		{0, "1"}, {time.Nanosecond, "1"}, {time.Second, "1"}, {time.Second + time.Nanosecond, "2"}, {6 * time.Second, "6"},
	} {
		if got := authlimit.RetryAfter(tc.retry); got != tc.want {
			t.Errorf("RetryAfter(%v) = %q, want %q", tc.retry, got, tc.want)
		}
	}
}
