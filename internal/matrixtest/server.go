package matrixtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Server is one Dendrite process and its directory. Its methods are not safe for concurrent
// use with Restart or Stop.
type Server struct {
	bin  string // the Dendrite binary
	dir  string // config, key, databases, JetStream, media, dendrite.log; owned by the caller
	addr string // host:port on loopback, kept across restarts so clients keep working

	cmd    *exec.Cmd
	exited chan struct{} // closed once the process is reaped
}

// Start starts the Dendrite binary bin on a free loopback port with dir as its directory,
// writing a config and a key there first unless dir holds them already. The caller stops it.
func Start(ctx context.Context, bin, dir string) (*Server, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := prepareDir(dir); err != nil {
		return nil, fmt.Errorf("matrixtest: prepare %s: %w", dir, err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, addr: addr}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// freeAddr is a loopback address no one listens on now. Dendrite does not report the port it
// bound, so it is given one; another process taking it in between fails the start with
// Dendrite's log in the error.
func freeAddr() (string, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("matrixtest: find a free port: %w", err)
	}
	addr := lis.Addr().String()
	return addr, lis.Close()
}

// start runs the process and waits until it answers.
func (s *Server) start(ctx context.Context) error {
	log, err := os.OpenFile(filepath.Join(s.dir, logFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close() // the process keeps its own descriptor
	cmd := exec.Command(s.bin, "--config", filepath.Join(s.dir, configFile), "--http-bind-address", s.addr)
	cmd.Dir = s.dir
	// Nothing of the test's environment reaches the server.
	cmd.Env = []string{"HOME=" + s.dir, "TMPDIR=" + os.TempDir()}
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so Stop reaches all of it; killed with the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("matrixtest: start dendrite: %w", err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	exited := s.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	if err := s.awaitReady(ctx); err != nil {
		s.Stop()
		return err
	}
	return nil
}

// awaitReady waits until the server answers /_matrix/client/versions, exits, or ctx ends.
func (s *Server) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	for {
		err := s.versions(ctx, client)
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("matrixtest: dendrite exited (%v): %s", s.cmd.ProcessState, s.log())
		case <-ctx.Done():
			return fmt.Errorf("matrixtest: dendrite not ready: %w (last: %v): %s", ctx.Err(), err, s.log())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// versions asks the server for its client API versions, the first thing every client asks.
func (s *Server) versions(ctx context.Context, client *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+"/_matrix/client/versions", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("versions: %s", resp.Status)
	}
	return nil
}

// log is the tail of the server's log, for an error message.
func (s *Server) log() []byte {
	b, _ := os.ReadFile(filepath.Join(s.dir, logFile))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return bytes.TrimSpace(b)
}

// URL is the homeserver's base URL, as clients are given it.
func (s *Server) URL() string { return "http://" + s.addr }

// Dir is the server's directory: its config, key, databases and dendrite.log.
func (s *Server) Dir() string { return s.dir }

// Restart stops the server and starts it again on the same directory and address: clients
// keep their URL and access tokens, and the data is as it was at the stop.
func (s *Server) Restart(ctx context.Context) error {
	s.Stop()
	return s.start(ctx)
}

// Stop asks the server to stop, kills its process group if it has not within 10 s, and waits
// for it to exit. The directory stays, so Restart or a new Start on it finds the data.
func (s *Server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return
	case <-time.After(10 * time.Second):
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}
