package listen

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/turncli/turncli/internal/cliflag"
	"github.com/turncli/turncli/internal/loopback"
)

// Config is the listeners section of the primary's configuration: where it listens, and the
// TLS of its public listeners.
type Config struct {
	// GRPC serves the gRPC APIs (runtime, operators, workers, tool hosts).
	GRPC string
	// HTTP serves the same APIs as REST through grpc-gateway, and the dashboard.
	HTTP string
	// AgentCLI serves the Agent CLI REST routes for local shells; loopback only.
	AgentCLI string
	// Metrics, when set, serves Prometheus /metrics, /healthz and /readyz.
	Metrics string
	// TLSCertFile and TLSKeyFile, when set, serve the gRPC and REST APIs over TLS (workers then
	// dial with --tls-ca). The loopback Agent CLI listener never uses TLS.
	TLSCertFile string
	TLSKeyFile  string
}

// Defaults returns the section's defaults: the well-known loopback ports, no metrics, no TLS.
// A Config built in code listens only where it says (tests pass their own listeners); these
// are the flags' defaults.
func Defaults() Config {
	return Config{GRPC: "127.0.0.1:7420", HTTP: "127.0.0.1:7421", AgentCLI: "127.0.0.1:7422"}
}

// Validate reports settings that cannot work: an Agent CLI address off loopback, half a TLS
// pair.
func (c *Config) Validate() error {
	if c.AgentCLI != "" { // Open requires it; a primary given listeners checks the one it gets
		if err := RequireLoopback(c.AgentCLI); err != nil {
			return fmt.Errorf("agent cli listener must be a loopback address: %w", err)
		}
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return errors.New("TLS needs both a certificate and a key file")
	}
	return nil
}

// BindFlags binds the section to fs, with Defaults (or the environment) as the flags' defaults.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	d := Defaults()
	fs.StringVar(&c.GRPC, "grpc-listen", cliflag.Env("MINDROOM_GRPC_LISTEN", d.GRPC), "gRPC API address; port 0 picks one (env MINDROOM_GRPC_LISTEN)")
	fs.StringVar(&c.HTTP, "http-listen", cliflag.Env("MINDROOM_HTTP_LISTEN", d.HTTP), "REST API address (env MINDROOM_HTTP_LISTEN)")
	fs.StringVar(&c.AgentCLI, "agent-cli-listen", cliflag.Env("MINDROOM_AGENT_CLI_LISTEN", d.AgentCLI), "loopback Agent CLI address for local shells (env MINDROOM_AGENT_CLI_LISTEN)")
	fs.StringVar(&c.Metrics, "metrics-listen", cliflag.Env("MINDROOM_METRICS_LISTEN", d.Metrics), "Prometheus /metrics, /healthz and /readyz address; port 0 picks one; empty: none (env MINDROOM_METRICS_LISTEN)")
	fs.StringVar(&c.TLSCertFile, "tls-cert", os.Getenv("MINDROOM_TLS_CERT"), "PEM certificate: serve the gRPC and REST APIs over TLS (env MINDROOM_TLS_CERT)")
	fs.StringVar(&c.TLSKeyFile, "tls-key", os.Getenv("MINDROOM_TLS_KEY"), "PEM private key for --tls-cert (env MINDROOM_TLS_KEY)")
}

// Open listens on the section's addresses, with its TLS; on a failure it closes what it
// opened. The Agent CLI address is required.
func (c Config) Open() (Listeners, error) {
	if c.AgentCLI == "" {
		return Listeners{}, errors.New("the Agent CLI listener address is required (a loopback address)")
	}
	var lis Listeners
	for _, spec := range []struct {
		addr string
		dst  *net.Listener
	}{{c.GRPC, &lis.GRPC}, {c.HTTP, &lis.HTTP}, {c.AgentCLI, &lis.AgentCLI}, {c.Metrics, &lis.Metrics}} {
		if spec.addr == "" && spec.dst == &lis.Metrics {
			continue // metrics are optional
		}
		l, err := net.Listen("tcp", spec.addr)
		if err != nil {
			lis.Close()
			return Listeners{}, fmt.Errorf("listen %s: %w", spec.addr, err)
		}
		*spec.dst = l
	}
	if c.TLSCertFile != "" {
		var err error
		if lis.TLS, err = ServerTLS(c.TLSCertFile, c.TLSKeyFile); err != nil {
			lis.Close()
			return Listeners{}, err
		}
	}
	return lis, nil
}

// RequireLoopback accepts host:port whose host is a loopback IP or "localhost".
func RequireLoopback(addr string) error {
	if !loopback.Addr(addr) {
		return fmt.Errorf("%q is not a loopback address", addr)
	}
	return nil
}
