// Package pgtest starts throwaway PostgreSQL clusters for tests: initdb into a temporary
// directory, one postgres server listening only on a unix socket in that directory, stopped
// and the directory removed at the end. Tests of one binary share one cluster (Shared) and
// take a fresh database each (NewDatabase); tests that run servers as real processes (a
// failover) and the benchmark harness start clusters of their own (Start).
//
// initdb and postgres refuse to run as root: as root, the cluster's directory is given to
// the `postgres` user the Debian package creates and the server runs as that user. When no
// server can be started, NewDatabase skips the test with the reason, unless
// TURNCLI_REQUIRE_POSTGRES=1 (CI), where it fails. It owns no schema: drivers migrate the
// databases they are given.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// RequireEnv names the variable that, set to 1, turns a missing PostgreSQL into a failure.
const RequireEnv = "TURNCLI_REQUIRE_POSTGRES"

// BinEnv names the variable that, when set, is the directory holding initdb and postgres.
const BinEnv = "TURNCLI_POSTGRES_BIN"

// port names the socket file; nothing listens on TCP, so any number is free.
const port = 5432

// Cluster is one running server and its directory. Its methods are safe for concurrent use.
type Cluster struct {
	dir    string // the cluster's own: data/, the socket, server.log
	cmd    *exec.Cmd
	exited chan struct{} // closed once the server process is reaped

	mu       sync.Mutex
	admin    *pgx.Conn // to the postgres database, for CREATE DATABASE
	strategy string    // CREATE DATABASE's STRATEGY clause: empty before PostgreSQL 15
	next     int       // the number of the next database NewDatabase creates
}

// Options tune a cluster; the zero value is the fast one tests use.
type Options struct {
	// Durable keeps the server's durability (fsync, synchronous commit, full pages) and puts
	// its directory on disk (the system's temporary directory), for measuring: a test cluster
	// has none and lives in memory where it can.
	Durable bool
}

// Start runs initdb in a new temporary directory and starts a server on it. The caller
// stops it.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	base := os.TempDir()
	if !opts.Durable {
		base = memoryDir()
	}
	removeOrphans(base)
	dir, err := os.MkdirTemp(base, "pgtest-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if err := writeOwner(dir); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("pgtest: give %s to the postgres user: %w", dir, err)
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"),
		"-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %w: %s", err, bytes.TrimSpace(out))
	}

	logFile, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the server keeps its own descriptor
	args := []string{"-D", filepath.Join(dir, "data"), "-k", dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=", "-c", "max_connections=300", "-c", "wal_level=minimal", "-c", "max_wal_senders=0"}
	if !opts.Durable {
		// A test cluster never survives a crash of the machine, and fsync would dominate
		// every test's time.
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so Stop reaches every backend; killed with the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	c := &Cluster{dir: dir, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.exited) }()
	if err := c.awaitReady(ctx); err != nil {
		c.stopServer()
		return nil, err
	}
	return c, nil
}

// memoryDir is where test clusters' directories are made: /dev/shm where it is a writable
// directory (a memory file system: creating a database is ten times faster there), else the
// system's temporary directory. Both are short paths, as a socket's must be.
func memoryDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}

// binDir is where initdb and postgres are: BinEnv, else the directory of initdb on PATH, else
// the newest /usr/lib/postgresql/*/bin.
func binDir() (string, error) {
	if dir := os.Getenv(BinEnv); dir != "" {
		return dir, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	if len(found) == 0 {
		return "", errors.New("pgtest: no initdb on PATH or under /usr/lib/postgresql/*/bin (install the postgresql package)")
	}
	return filepath.Dir(found[0]), nil
}

// version is the major version in /usr/lib/postgresql/<version>/bin/initdb.
func version(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// serverUser is whom initdb and postgres run as: nil (this process's user) unless root, then
// the postgres user.
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs the postgres user to run the server: %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// awaitReady waits until the server accepts a connection, fails, or ctx ends.
func (c *Cluster) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			var version int
			if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
				conn.Close(ctx)
				return fmt.Errorf("pgtest: server version: %w", err)
			}
			c.admin = conn
			if version >= 150000 {
				c.strategy = " STRATEGY FILE_COPY"
			}
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("pgtest: postgres exited: %s", c.log())
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres not ready: %w (last: %v): %s", ctx.Err(), err, c.log())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// log is the tail of the server's log, for an error message.
func (c *Cluster) log() []byte {
	b, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return bytes.TrimSpace(b)
}

// URL is the connection URL of the database name on the cluster, as the postgres superuser.
func (c *Cluster) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&port=%d&sslmode=disable", name, c.dir, port)
}

// CreateDatabase creates an empty database named name and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	return c.CreateDatabaseFrom(ctx, name, "template1")
}

// CreateDatabaseFrom creates a database named name as a copy of the database template, which
// nobody may be connected to, and returns its URL. Copying a migrated database is much
// faster than migrating a new one. FILE_COPY copies the template's files at once (on a
// memory file system, in milliseconds) where the default logs every page.
func (c *Cluster) CreateDatabaseFrom(ctx context.Context, name, template string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+
		" TEMPLATE "+pgx.Identifier{template}.Sanitize()+c.strategy); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return c.URL(name), nil
}

// newName is the name of the next database of the cluster.
func (c *Cluster) newName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return "test" + strconv.Itoa(c.next)
}

// Stop stops the server (a fast shutdown: sessions are ended) and removes the directory.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.admin.Close(ctx)
		cancel()
		c.admin = nil
	}
	c.mu.Unlock()
	c.stopServer()
	return os.RemoveAll(c.dir)
}

// stopServer asks the server to stop and kills its process group if it has not within 10 s.
func (c *Cluster) stopServer() {
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
		return
	case <-time.After(10 * time.Second):
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.exited
}

// Dir is the cluster's directory: its data, its socket and server.log.
func (c *Cluster) Dir() string { return c.dir }
