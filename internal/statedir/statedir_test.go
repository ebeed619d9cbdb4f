package statedir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// holderEnv makes the test binary a process that takes the lock on the directory it names,
// says so on stdout and waits to be killed.
const holderEnv = "STATEDIR_TEST_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holderEnv); dir != "" {
		if _, err := Acquire(dir); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("held")
		time.Sleep(time.Hour)
	}
	os.Exit(m.Run())
}

func TestASecondLockIsRefusedNamingTheHolder(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	want := fmt.Sprintf("another primary is running on state directory %s (pid %d, not serving yet); stop it first, or give this one another --state-dir", dir, os.Getpid())
	var held *HeldError
	if !errors.As(err, &held) || err.Error() != want {
		t.Fatalf("second Acquire: %v\nwant %s", err, want)
	}

	if err := WriteEndpoints(dir, Endpoints{GRPC: "127.0.0.1:7420", HTTP: "http://127.0.0.1:7421", PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	want = fmt.Sprintf("another primary is running on state directory %s (pid %d, gRPC 127.0.0.1:7420, REST http://127.0.0.1:7421); stop it first, or give this one another --state-dir", dir, os.Getpid())
	if err == nil || err.Error() != want {
		t.Fatalf("Acquire beside a serving primary: %v\nwant %s", err, want)
	}

	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	again.Release()
}

// A primary killed with SIGKILL runs no cleanup: the kernel's release of the lock is what
// lets the next one start.
func TestAKilledHolderLeavesNoStaleLock(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		t.Fatalf("holder said %q", line)
	}
	_, err = Acquire(dir)
	var held *HeldError
	if !errors.As(err, &held) || held.PID != cmd.Process.Pid {
		t.Fatalf("Acquire beside the holder: %v, want it refused naming pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	l.Release()
}

// gonePID is the pid of a process that has exited.
func gonePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestRead(t *testing.T) {
	t.Run("NoEndpointsSaysNoPrimaryServes", func(t *testing.T) {
		dir := t.TempDir()
		_, err := Read(dir)
		want := fmt.Sprintf("no primary is serving on %s (there is no %s/endpoints.json); start it with `make run` or `mindroom-primary --state-dir %s`", dir, dir, dir)
		var nr *NotRunningError
		if !errors.As(err, &nr) || nr.PID != 0 || err.Error() != want {
			t.Fatalf("Read: %v\nwant %s", err, want)
		}
	})
	t.Run("AGoneProcessIsNotRunning", func(t *testing.T) {
		dir := t.TempDir()
		pid := gonePID(t)
		if err := WriteEndpoints(dir, Endpoints{GRPC: "127.0.0.1:1", PID: pid}); err != nil {
			t.Fatal(err)
		}
		_, err := Read(dir)
		want := fmt.Sprintf("the primary recorded in %s/endpoints.json (pid %d) is not running; start it with `make run` or `mindroom-primary --state-dir %s`", dir, pid, dir)
		var nr *NotRunningError
		if !errors.As(err, &nr) || nr.PID != pid || err.Error() != want {
			t.Fatalf("Read: %v\nwant %s", err, want)
		}
	})
	t.Run("ALiveProcessWithoutTheLockIsNotRunning", func(t *testing.T) {
		// The recorded pid now names another process (this one): the free lock tells.
		dir := t.TempDir()
		l, err := Acquire(dir)
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		if err := WriteEndpoints(dir, Endpoints{PID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
		var nr *NotRunningError
		if _, err := Read(dir); !errors.As(err, &nr) || nr.PID != os.Getpid() {
			t.Fatalf("Read: %v, want not running", err)
		}
		// The probe took and gave back the lock: a primary may still take it.
		l, err = Acquire(dir)
		if err != nil {
			t.Fatalf("Acquire after Read: %v", err)
		}
		l.Release()
	})
	t.Run("TheLockHolderIsRunning", func(t *testing.T) {
		dir := t.TempDir()
		l, err := Acquire(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		if err := WriteEndpoints(dir, Endpoints{GRPC: "127.0.0.1:7420", PID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
		ep, err := Read(dir)
		if err != nil || ep.GRPC != "127.0.0.1:7420" {
			t.Fatalf("Read = %+v, %v", ep, err)
		}
	})
	t.Run("WithoutALockFileTheLivePIDIsTrusted", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, EndpointsFile), []byte(`{"grpc":"127.0.0.1:9","pid":`+strconv.Itoa(os.Getpid())+`}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if ep, err := Read(dir); err != nil || ep.GRPC != "127.0.0.1:9" {
			t.Fatalf("Read = %+v, %v", ep, err)
		}
	})
}

func TestRemoveEndpointsRemovesOnlyItsOwn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EndpointsFile)
	if err := WriteEndpoints(dir, Endpoints{PID: os.Getpid() + 1}); err != nil {
		t.Fatal(err)
	}
	if err := RemoveEndpoints(dir, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("another process's endpoints.json was removed: %v", err)
	}
	if err := WriteEndpoints(dir, Endpoints{PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if err := RemoveEndpoints(dir, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("own endpoints.json after RemoveEndpoints: %v", err)
	}
	if err := RemoveEndpoints(dir, os.Getpid()); err != nil {
		t.Fatalf("RemoveEndpoints without a file: %v", err)
	}
}
