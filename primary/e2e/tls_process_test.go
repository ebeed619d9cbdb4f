package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/turncli/turncli/primary"
)

// TestTLSPrimaryProcessNamesHTTPSAndLogsOnlyJSON runs the real mindroom-primary with a TLS
// certificate: endpoints.json names https:// for the REST API, and what the libraries under it
// log on their own (net/http's handshake errors, gRPC's lines at debug level) comes out as JSON
// like every line of the primary's own.
func TestTLSPrimaryProcessNamesHTTPSAndLogsOnlyJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	bin := mpBuild(t)
	dir := shellTempDir(t)
	certFile, keyFile := writeSelfSigned(t, dir)
	state := filepath.Join(dir, "state")
	p := mpStart(t, "mindroom-primary", filepath.Join(bin, "mindroom-primary"), mpBaseEnv(t),
		"--state-dir", state, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
		"--agent-cli-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
		"--tls-cert", certFile, "--tls-key", keyFile, "--log-level", "debug")
	serving := p.waitLog(t, "primary serving", 1)

	var ep primary.Endpoints
	data, err := os.ReadFile(filepath.Join(state, primary.EndpointsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ep.HTTP, "https://") || !strings.HasPrefix(ep.AgentCLI, "http://") || !strings.HasPrefix(ep.Metrics, "http://") {
		t.Fatalf("endpoints.json names REST %q, Agent CLI %q, metrics %q; want https:// for the TLS listener only", ep.HTTP, ep.AgentCLI, ep.Metrics)
	}

	// The start line says where the dashboard is and where the admin's credential is kept.
	if serving["dashboard"] != ep.HTTP+"/ui/" || serving["admin_credential_file"] != ep.OperatorTokenFile || ep.OperatorTokenFile == "" {
		t.Errorf("the serving line names dashboard %v and credential %v; want %s/ui/ and %s",
			serving["dashboard"], serving["admin_credential_file"], ep.HTTP, ep.OperatorTokenFile)
	}

	// Plain text to both TLS listeners: each library logs the failed handshake its own way.
	for _, addr := range []string{strings.TrimPrefix(ep.HTTP, "https://"), ep.GRPC} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), mpDeadline)
	defer cancel()
	for !p.log.has(func(l map[string]any) bool {
		msg, _ := l["msg"].(string)
		return l["source"] == "net/http" && l["level"] == "WARN" && strings.Contains(msg, "TLS handshake error")
	}) {
		select {
		case <-ctx.Done():
			t.Fatal("net/http's handshake error was not logged as a JSON warning")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if code := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d", code)
	}

	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	grpcLines := 0
	for _, raw := range p.log.raw {
		var line map[string]any
		if err := json.Unmarshal([]byte(raw), &line); err != nil {
			t.Errorf("a line is not JSON: %q", raw)
		}
		if line["source"] == "grpc" {
			grpcLines++
		}
	}
	if grpcLines == 0 {
		t.Errorf("gRPC logged nothing through the primary's logger at debug level")
	}
}
