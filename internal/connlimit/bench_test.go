package connlimit_test

import (
	"net"
	"testing"

	"github.com/turncli/turncli/internal/connlimit"
)

// BenchmarkLoopbackConnection measures a loopback connect, accept and close, bare and through
// a Limiter (whose per-user key costs one NETLINK_SOCK_DIAG round trip per accept).
func BenchmarkLoopbackConnection(b *testing.B) {
	for _, bc := range []struct {
		name string
		wrap func(net.Listener) net.Listener
	}{
		{"Bare", func(l net.Listener) net.Listener { return l }},
		{"Limited", func(l net.Listener) net.Listener { return connlimit.New(connlimit.Config{}, nil).Wrap(l, nil) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			raw, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			l := bc.wrap(raw)
			defer l.Close()
			for b.Loop() {
				c, err := net.Dial("tcp", l.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				s, err := l.Accept()
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
				c.Close()
			}
		})
	}
}
