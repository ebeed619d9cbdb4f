// Package listen holds the listeners a primary serves on: opening them from addresses, and
// applying TLS to the public ones. It serves nothing itself.
package listen

import (
	"crypto/tls"
	"fmt"
	"net"
)

// Listeners are where the primary serves. Tests pass bufconn or loopback listeners; a process
// opens TCP listeners from its addresses (Config.Open).
type Listeners struct {
	GRPC     net.Listener
	HTTP     net.Listener
	AgentCLI net.Listener
	// Metrics, when not nil, serves /metrics, /healthz and /readyz.
	Metrics net.Listener
	// TLS, when set, serves GRPC and HTTP over TLS (the Agent CLI and metrics stay on plain
	// loopback HTTP). The listeners are given plain: TLS is applied after the connections are
	// counted, so the servers see TLS connections (a request's TLS state, a dashboard cookie's
	// Secure flag) and a refused client is told why over TLS.
	TLS *tls.Config
}

// Secured returns lis with TLS applied to GRPC and HTTP when lis.TLS is set.
func (lis Listeners) Secured() Listeners {
	if lis.TLS == nil {
		return lis
	}
	grpcTLS, restTLS := lis.TLS.Clone(), lis.TLS.Clone()
	grpcTLS.NextProtos = []string{"h2"}       // gRPC is HTTP/2 only
	restTLS.NextProtos = []string{"http/1.1"} // the REST server behind a plain Serve speaks HTTP/1.1
	lis.GRPC = tls.NewListener(lis.GRPC, grpcTLS)
	lis.HTTP = tls.NewListener(lis.HTTP, restTLS)
	return lis
}

// RESTScheme is the scheme of the REST API's URL.
func (lis Listeners) RESTScheme() string {
	if lis.TLS != nil {
		return "https://"
	}
	return "http://"
}

// Close closes every listener that is set.
func (lis Listeners) Close() {
	for _, l := range []net.Listener{lis.GRPC, lis.HTTP, lis.AgentCLI, lis.Metrics} {
		if l != nil {
			l.Close()
		}
	}
}

// ServerTLS is the TLS configuration of the public listeners: TLS 1.2 or later. TLS ends at the
// listener, so the servers behind it, and the in-process connections that bypass it, are the
// same as without TLS.
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
