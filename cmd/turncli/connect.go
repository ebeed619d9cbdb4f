package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/loopback"
	"github.com/turncli/turncli/internal/statedir"
)

// globalFlags are the flags every command takes.
type globalFlags struct {
	addr, tokenFile, tlsCA, stateDir string
	insecure, json                   bool
	timeout                          time.Duration
}

func (g *globalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&g.addr, "addr", os.Getenv("TURNCLI_ADDR"), "the primary's gRPC address host:port (env TURNCLI_ADDR; default: endpoints.json)")
	fs.StringVar(&g.tokenFile, "token-file", os.Getenv("TURNCLI_TOKEN_FILE"), "file holding the operator credential (env TURNCLI_TOKEN_FILE; default: endpoints.json's operator_token_file)")
	fs.StringVar(&g.tlsCA, "tls-ca", os.Getenv("TURNCLI_TLS_CA"), "verify the primary's TLS certificate against this CA bundle (env TURNCLI_TLS_CA)")
	fs.StringVar(&g.stateDir, "state-dir", envOr("TURNCLI_STATE_DIR", ".turncli"), "a primary's state directory, whose endpoints.json says where it serves (env TURNCLI_STATE_DIR)")
	fs.BoolVar(&g.insecure, "insecure", false, "allow sending the credential in clear to a primary that is not on loopback")
	fs.BoolVar(&g.json, "json", false, "print protojson, one object per line, instead of a table")
	fs.DurationVar(&g.timeout, "timeout", 30*time.Second, "bound each request (not a follow)")
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// cli is one run of a command: its flags, streams and, once connected, its client.
type cli struct {
	global         globalFlags
	stdin          io.Reader
	stdout, stderr io.Writer
	api            operatorv1.OperatorServiceClient
	conn           *grpc.ClientConn
	token          string
	connected      bool
}

// connect resolves the primary and the credential and dials; it is called by every command
// before its first request.
func (c *cli) connect() error {
	if c.conn != nil {
		return nil
	}
	addr, tokenFile := c.global.addr, c.global.tokenFile
	readToken := os.ReadFile // a file the operator named
	if addr == "" || tokenFile == "" {
		ep, err := readEndpoints(c.global.stateDir)
		if err != nil {
			return err
		}
		if addr == "" {
			addr = ep.GRPC
		}
		if tokenFile == "" {
			// A file endpoints.json names is read only if it is as private as the record.
			tokenFile, readToken = ep.OperatorTokenFile, statedir.ReadPrivate
		}
	}
	if tokenFile == "" {
		return errors.New("no operator credential: give --token-file or TURNCLI_TOKEN_FILE (the primary's endpoints.json names none)")
	}
	raw, err := readToken(tokenFile)
	if err != nil {
		return fmt.Errorf("operator credential: %w", err)
	}
	c.token = strings.TrimSpace(string(raw))
	if c.token == "" {
		return fmt.Errorf("operator credential: %s is empty", tokenFile)
	}
	transport := insecure.NewCredentials()
	switch {
	case c.global.tlsCA != "":
		pem, err := os.ReadFile(c.global.tlsCA)
		if err != nil {
			return fmt.Errorf("tls ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("tls ca: no certificate in %s", c.global.tlsCA)
		}
		transport = credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	case !c.global.insecure && !loopback.Addr(addr):
		return fmt.Errorf("refusing to send the operator credential in clear to %s, which is not on loopback: give --tls-ca, or --insecure", addr)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(transport))
	if err != nil {
		return fmt.Errorf("primary %s: %w", addr, err)
	}
	c.conn, c.api = conn, operatorv1.NewOperatorServiceClient(conn)
	return nil
}

// readEndpoints reads where the primary of stateDir serves; statedir.Read says plainly when
// none runs there.
func readEndpoints(stateDir string) (statedir.Endpoints, error) {
	ep, err := statedir.Read(stateDir)
	if err != nil {
		return ep, fmt.Errorf("%w (or give --addr and --token-file)", err)
	}
	return ep, nil
}

// call returns a context for one request: the operator's credential, and the timeout.
func (c *cli) call(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.token)
	return context.WithTimeout(ctx, c.global.timeout)
}

// follow returns a context for a stream that lasts until the command is interrupted.
func (c *cli) follow(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.token)
}

func (c *cli) close() {
	if c.conn != nil {
		c.conn.Close()
	}
}
