package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

// fleetRuntimeToken is the runtime credential the fleet's primary is started with.
const fleetRuntimeToken = "turncli-bench-fleet-runtime-credential"

// fleetPrimary is a mindroom-primary process on loopback ports that stay the same across its
// restarts, so the workers reconnect to the same address.
type fleetPrimary struct {
	bin, dir                    string
	grpcAddr, httpAddr, cliAddr string
	metricsAddr                 string
	keys                        []string
	cmd                         *exec.Cmd
	exited                      chan struct{} // closed once cmd has exited
	conn                        *grpc.ClientConn
	runtime                     responsev1.ResponseServiceClient
	operator                    operatorv1.OperatorServiceClient
	operatorToken               string
}

// freeAddr returns a loopback address no one listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func newFleetPrimary(bin, dir string, keys []string) (*fleetPrimary, error) {
	p := &fleetPrimary{bin: bin, dir: dir, keys: keys}
	for _, a := range []*string{&p.grpcAddr, &p.httpAddr, &p.cliAddr, &p.metricsAddr} {
		var err error
		if *a, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// start runs the primary and waits until it is ready (at most 30 s); on its first start it
// creates the worker keys' credentials and the first admin, whose credential it then reads.
func (p *fleetPrimary) start(ctx context.Context) error {
	log, err := os.OpenFile(filepath.Join(p.dir, "primary.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	p.cmd = exec.Command(p.bin, "--state-dir", filepath.Join(p.dir, "primary"),
		"--grpc-listen", p.grpcAddr, "--http-listen", p.httpAddr, "--agent-cli-listen", p.cliAddr,
		"--metrics-listen", p.metricsAddr, "--enable-test-toolkit", "--worker-keys", strings.Join(p.keys, ","),
		"--shell-env-allow", "", "--log-level", "warn")
	p.cmd.Env = []string{"MINDROOM_RUNTIME_TOKEN=" + fleetRuntimeToken, "HOME=" + p.dir, "PATH=" + os.Getenv("PATH")}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		return err
	}
	p.exited = waitFor(p.cmd)
	if err := waitReady(ctx, "http://"+p.metricsAddr+"/readyz", p.exited); err != nil {
		return fmt.Errorf("primary: %w (log: %s)", err, filepath.Join(p.dir, "primary.log"))
	}
	if p.conn == nil {
		token, err := os.ReadFile(filepath.Join(p.dir, "primary", "credentials", "operator-admin.token"))
		if err != nil {
			return err
		}
		p.operatorToken = strings.TrimSpace(string(token))
		if p.conn, err = grpc.NewClient(p.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return err
		}
		p.runtime = responsev1.NewResponseServiceClient(p.conn)
		p.operator = operatorv1.NewOperatorServiceClient(p.conn)
	}
	return nil
}

// asRuntime and asOperator are contexts carrying the runtime's and the first admin's credential.
func (p *fleetPrimary) asRuntime(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+fleetRuntimeToken)
}

func (p *fleetPrimary) asOperator(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+p.operatorToken)
}

// stop sends sig and waits for the process to exit (at most 30 s, then KILL).
func (p *fleetPrimary) stop(sig syscall.Signal) {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.cmd = nil
}

func (p *fleetPrimary) close() {
	p.stop(syscall.SIGTERM)
	if p.conn != nil {
		_ = p.conn.Close()
	}
}

// workerCredentialFile is where the primary keeps key's credential.
func (p *fleetPrimary) workerCredentialFile(key string) string {
	return filepath.Join(p.dir, "primary", "credentials", "workers", key+".token")
}

// connected returns the connected workers by id, with the jobs each reports running.
func (p *fleetPrimary) connected(ctx context.Context) (map[string][]int64, error) {
	out := map[string][]int64{}
	token := ""
	for {
		page, err := p.operator.ListWorkers(p.asOperator(ctx), &operatorv1.ListWorkersRequest{PageSize: 1000, PageToken: token})
		if err != nil {
			return nil, err
		}
		for _, w := range page.GetWorkers() {
			out[w.GetWorkerId()] = w.GetRunningJobIds()
		}
		if token = page.GetNextPageToken(); token == "" {
			return out, nil
		}
	}
}

// fleetWorker is one mindroom-worker process.
type fleetWorker struct {
	id, key  string
	capacity int
	dir      string
	cmd      *exec.Cmd
	exited   chan struct{}
}

func startFleetWorker(cfg Config, p *fleetPrimary, dir, id, key string, capacity int) (*fleetWorker, error) {
	w := &fleetWorker{id: id, key: key, capacity: capacity, dir: dir}
	if err := os.MkdirAll(dir, 0o711); err != nil { // passable by the shell user; see measureFleet
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "worker.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	w.cmd = exec.Command(cfg.WorkerBinary, "--primary", p.grpcAddr, "--key", key, "--id", id,
		"--capacity", strconv.Itoa(capacity), "--state-dir", filepath.Join(dir, "state"),
		"--agent-binary", cfg.AgentBinary, "--shell-env-allow", "", "--log-level", "warn")
	w.cmd.Env = []string{"MINDROOM_WORKER_CREDENTIAL_FILE=" + p.workerCredentialFile(key), "HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	w.cmd.Stdout, w.cmd.Stderr = log, log
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	w.exited = waitFor(w.cmd)
	return w, nil
}

func (w *fleetWorker) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(15 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
	}
}

// waitFor reaps cmd in the background; the channel closes once it has exited.
func waitFor(cmd *exec.Cmd) chan struct{} {
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	return done
}

// waitReady polls url until it answers 200, the process exits or 30 s pass.
func waitReady(ctx context.Context, url string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("exited before it was ready")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("not ready after 30 s")
		}
	}
}
