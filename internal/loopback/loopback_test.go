package loopback

import "testing"

func TestAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:80": true, "127.1.2.3:0": true, "[::1]:443": true, "localhost:7422": true,
		"0.0.0.0:80": false, ":80": false, "10.0.0.1:80": false, "example.org:80": false,
		"127.0.0.1": false, "": false, "[::]:80": false,
	} {
		if got := Addr(addr); got != want {
			t.Errorf("Addr(%q) = %v, want %v", addr, got, want)
		}
	}
}
