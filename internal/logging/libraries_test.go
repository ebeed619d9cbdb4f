package logging

import (
	"errors"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"google.golang.org/grpc/grpclog"

	"github.com/turncli/turncli/internal/logtest"
)

// find returns the first line from source whose message contains part.
func find(lines []map[string]any, source, part string) map[string]any {
	for _, l := range lines {
		if l["source"] == source && strings.Contains(l["msg"].(string), part) {
			return l
		}
	}
	return nil
}

func TestHTTPServerLogWritesTheServersOwnLinesAsJSON(t *testing.T) {
	var out logtest.Buffer
	logger, err := New(&out, FormatJSON, "info")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = HTTPServerLog(logger)
	srv.StartTLS()
	defer srv.Close()

	// A client speaking plain text to the TLS listener makes the server log a handshake error.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	conn.Read(make([]byte, 512))
	conn.Close()

	deadline := time.Now().Add(5 * time.Second)
	for {
		if l := find(out.Lines(t), "net/http", "TLS handshake error"); l != nil {
			if l["level"] != "WARN" {
				t.Fatalf("level %v, want WARN", l["level"])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no handshake error line in %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRouteLibrariesSendsTheirLinesToTheLogger(t *testing.T) {
	var out logtest.Buffer
	logger, err := New(&out, FormatJSON, "info")
	if err != nil {
		t.Fatal(err)
	}
	before, beforeFlags := slog.Default(), log.Flags()
	t.Cleanup(func() { slog.SetDefault(before); log.SetFlags(beforeFlags) })
	RouteLibraries(logger)

	log.Print("standard library line")
	grpclog.Errorf("transport %s failed", "x")
	grpclog.Infof("routine %s", "reconnect")
	otel.Handle(errors.New("exporter unreachable"))

	lines := out.Lines(t)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3 (gRPC's info line is debug): %v", len(lines), lines)
	}
	if msg, _ := lines[0]["msg"].(string); !strings.Contains(msg, "standard library line") || lines[0]["level"] != "INFO" {
		t.Errorf("log.Print gave %v", lines[0])
	}
	if l := find(lines, "grpc", "transport x failed"); l == nil || l["level"] != "ERROR" {
		t.Errorf("grpclog.Errorf gave %v", lines)
	}
	if l := find(lines, "opentelemetry", "opentelemetry failed"); l == nil || l["err"] != "exporter unreachable" {
		t.Errorf("otel.Handle gave %v", lines)
	}
}
