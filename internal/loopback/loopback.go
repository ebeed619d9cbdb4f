// Package loopback answers one question the same way everywhere: does an address stay on this
// machine? Listeners that must be loopback-only and clients that must not send a credential off
// the machine in clear both ask it.
package loopback

import "net"

// Host reports whether host is "localhost" or a loopback IP address.
func Host(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr reports whether a host:port address names a loopback host.
func Addr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	return err == nil && Host(host)
}
