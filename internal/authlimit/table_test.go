package authlimit

import (
	"net/netip"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock/clocktest"
)

func TestAFloodOfAddressesKeepsTheTableBounded(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	l, err := New(Config{MaxAddrs: 100, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	base := netip.MustParseAddr("2001:db8::").As16()
	for i := range 10_000 {
		a := base
		a[6], a[7] = byte(i>>8), byte(i) // a /64 of its own each
		l.Fail(netip.AddrFrom16(a))
		if i%1000 == 0 {
			clk.Advance(time.Second)
		}
	}
	if n := len(l.table); n > 100 || l.recent.Len() != n {
		t.Fatalf("%d addresses tracked (%d in the recency list), want at most 100", n, l.recent.Len())
	}
}
