package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	workercreds "github.com/turncli/turncli/primary/credentials"
	"github.com/turncli/turncli/worker"
)

// writeSelfSigned writes a certificate for 127.0.0.1 and its key, returning their paths.
func writeSelfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "turncli test primary"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestTLSPrimaryServesWorkersRuntimeAndREST(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeSelfSigned(t, dir)
	stateDir := filepath.Join(dir, "state")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tlsCfg, err := primary.ServerTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	listen := func() net.Listener {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	ctx, cancel := context.WithCancel(context.Background())
	p, err := primary.New(ctx, primary.Config{
		StateDir: stateDir, EnableTestToolkit: true, Shells: shellhost.Settings{AgentBinary: testenv.AgentBinary(t)},
		Workers: primary.WorkersConfig{Credentials: workercreds.Workers{Keys: []string{"key-a"}}}, Logger: logger, ShutdownGrace: 5 * time.Second,
	}, primary.Listeners{GRPC: listen(), HTTP: listen(), AgentCLI: listen(), TLS: tlsCfg})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("primary.Serve: %v", err)
		}
	})
	ep := p.Endpoints()
	readToken := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(data))
	}
	pool := x509.NewCertPool()
	pemBytes, _ := os.ReadFile(certFile)
	pool.AppendCertsFromPEM(pemBytes)

	// A worker that trusts only the test CA connects over TLS.
	wctx, wcancel := context.WithCancel(context.Background())
	wdone := make(chan error, 1)
	go func() {
		wdone <- worker.Run(wctx, worker.Config{
			PrimaryAddr: ep.GRPC, TLSCAFile: certFile, Credential: readToken(ep.WorkerTokenFiles["key-a"]),
			Key: "key-a", ID: "tls-worker", StateDir: filepath.Join(dir, "worker"), Shells: shellhost.Settings{AgentBinary: testenv.AgentBinary(t)},
			Logger: logger, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
		})
	}()
	t.Cleanup(func() {
		wcancel()
		if err := <-wdone; err != nil {
			t.Errorf("worker.Run: %v", err)
		}
	})

	runtimeToken := readToken(ep.RuntimeTokenFile)
	conn, err := grpc.NewClient(ep.GRPC,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})),
		grpc.WithPerRPCCredentials(bearerToken(runtimeToken)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	api := responsev1.NewResponseServiceClient(conn)

	t.Run("WorkerShellCallsThroughItsProxyOverATLSConnection", func(t *testing.T) {
		waitCtx, done := context.WithTimeout(context.Background(), 20*time.Second)
		defer done()
		if err := p.Internals().Workers.WaitConnected(waitCtx, "tls-worker"); err != nil {
			t.Fatalf("the TLS worker never connected: %v", err)
		}
		opened, err := api.OpenResponse(context.Background(), &responsev1.OpenResponseRequest{AgentName: "tls", WorkerKey: "key-a"})
		if err != nil {
			t.Fatal(err)
		}
		defer api.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: opened.GetResponseId()})
		run, err := mpRunBash(context.Background(), api, opened.GetResponseId(), "tls-1", `mindroom-agent tools call test.echo '{"tls":true}'`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if run.result.GetExitCode() != 0 || len(run.result.GetReceipts()) != 1 || run.result.GetReceipts()[0].GetOutcomeJson() != `{"tls":true}` {
			t.Fatalf("result %v", run.result)
		}
	})

	t.Run("RESTIsServedOverTLSAndPlainHTTPIsRefused", func(t *testing.T) {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		defer client.CloseIdleConnections()
		if !strings.HasPrefix(ep.HTTP, "https://") || !strings.HasPrefix(ep.AgentCLI, "http://") {
			t.Fatalf("endpoints name REST %q and the Agent CLI %q; want https:// for the TLS listener only", ep.HTTP, ep.AgentCLI)
		}
		req, _ := http.NewRequest(http.MethodPost, ep.HTTP+"/v1/responses", strings.NewReader(`{"agent_name":"rest-tls"}`))
		req.Header.Set("Authorization", "Bearer "+runtimeToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			ResponseID string `json:"response_id"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || body.ResponseID == "" {
			t.Fatalf("status %d body %+v", resp.StatusCode, body)
		}
		api.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: body.ResponseID})
		plain := &http.Client{Timeout: 5 * time.Second}
		if resp, err := plain.Get(strings.Replace(ep.HTTP, "https://", "http://", 1) + "/v1/responses"); err == nil {
			resp.Body.Close()
			if resp.StatusCode < 400 {
				t.Errorf("plain HTTP to the TLS listener answered %d", resp.StatusCode)
			}
		}
		plain.CloseIdleConnections()
	})

	t.Run("DashboardSessionCookieIsSecureOverTLS", func(t *testing.T) {
		client := &http.Client{
			Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		defer client.CloseIdleConnections()
		form := url.Values{"credential": {readToken(ep.OperatorTokenFile)}}
		resp, err := client.PostForm(ep.HTTP+"/ui/signin", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cookies := resp.Cookies()
		if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].Secure || !cookies[0].HttpOnly {
			t.Fatalf("sign-in over TLS: %s, cookies %v; want one Secure, HttpOnly session cookie", resp.Status, resp.Header.Values("Set-Cookie"))
		}
	})
}

// bearerToken is a per-RPC credential carrying the runtime token (TLS connections only).
type bearerToken string

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearerToken) RequireTransportSecurity() bool { return true }
