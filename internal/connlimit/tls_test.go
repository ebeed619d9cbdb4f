package connlimit_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/connlimit"
)

// selfSigned is a server configuration for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool
}

// TestRefusalsOverTLSAreToldWhyOverTLS counts connections beneath TLS (so the server behind
// sees TLS connections) and refuses the one over the limit with a 503 the TLS client can read.
func TestRefusalsOverTLSAreToldWhyOverTLS(t *testing.T) {
	cfg, pool := selfSigned(t)
	lim := connlimit.New(connlimit.Config{PerAddress: 1, Total: 10}, nil)
	counted := listen(t, lim, connlimit.OverTLS(cfg, "http/1.1", connlimit.HTTP1))
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			http.Error(w, "not a TLS connection", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "ok")
	})}
	go srv.Serve(tls.NewListener(counted, cfg))
	t.Cleanup(func() { srv.Close() })

	get := func() (status, retryAfter, body string) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
		t.Cleanup(tr.CloseIdleConnections) // the first stays open, holding its place
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + counted.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Status, resp.Header.Get("Retry-After"), string(b)
	}
	if status, _, body := get(); body != "ok" { // the limit itself passes, over TLS
		t.Fatalf("first connection: %s %q", status, body)
	}
	status, retry, body := get()
	if status != "503 Service Unavailable" || retry != "1" || body != "too many connections from this address\n" {
		t.Fatalf("connection over the limit: %s retry-after=%q %q", status, retry, body)
	}
}
